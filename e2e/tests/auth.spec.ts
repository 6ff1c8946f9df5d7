// User story: a viewer and an operator log in; nobody can change anything without logging in, and nothing
// the browser gives another port of the same host lets that port act as the user.
import { apiLoginAs, loginAs, sessionTokenOf } from '../support/auth';
import { expect, test } from '../support/fixtures';
import { PortListener } from '../support/listener';

test.describe('login', () => {
  test('an operator logs in through the form, sees the role, and logs out', async ({ page }) => {
    await loginAs(page, 'operator');
    await page.getByTestId('logout').click();
    await expect(page.getByTestId('login-link')).toBeVisible();
    const me = await page.request.get('/api/auth/me');
    expect(me.status()).toBe(401);
  });

  test('a wrong password is refused with a clear message', async ({ page }) => {
    await page.goto('/login');
    await page.getByTestId('login-username').fill('viewer');
    await page.getByTestId('login-password').fill('not-the-password');
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('login-error')).toContainText('wrong user name or password');
    await expect(page.getByTestId('login-link')).toBeVisible();
  });

  test('the session lives in the tab, not in a cookie, and a viewer is a viewer', async ({ page, playwright, stack }) => {
    await loginAs(page, 'viewer');
    expect(await page.context().cookies()).toEqual([]);
    expect(await sessionTokenOf(page)).toMatch(/^v3\./);
    // A reload keeps the tab's session; a new tab of the same origin is handed it by the open one.
    await page.reload();
    await expect(page.getByTestId('user-name')).toHaveText('viewer');
    const second = await page.context().newPage();
    await second.goto('/');
    await expect(second.getByTestId('user-name')).toHaveText('viewer');
    await second.close();
    const request = await playwright.request.newContext({ baseURL: stack.baseURL });
    try {
      const session = await apiLoginAs(request, 'viewer');
      expect(await (await request.get('/api/auth/me', { headers: session })).json()).toEqual({ name: 'viewer', role: 'viewer' });
    } finally {
      await request.dispose();
    }
  });

  test('a listener on another port of the host gets nothing it can act with', async ({ page, playwright, stack }) => {
    const silence = { target: 'origin-probe', duration_s: 60, comment: 'from another port' };
    // The other port's page tries to act through the browser too (a simple request needs no preflight).
    const listener = await PortListener.start(`<!doctype html><script>
      fetch(${JSON.stringify(`${stack.baseURL}/api/alerts/silences`)}, { method: 'POST', mode: 'no-cors',
        credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body: ${JSON.stringify(JSON.stringify(silence))} })
        .finally(() => { document.title = 'sent'; });
    </script>`);
    const request = await playwright.request.newContext({ baseURL: stack.baseURL });
    try {
      await loginAs(page, 'operator');
      const token = await sessionTokenOf(page);
      expect(token).toBeTruthy();
      await page.goto(`${listener.url}/collect`);
      await expect(page).toHaveTitle('sent');
      await page.goto(`${listener.url}/collect.png`);

      // Nothing of the session reached the other port...
      const seen = listener.transcript();
      expect(listener.received.length).toBeGreaterThanOrEqual(2);
      expect(seen).not.toContain(token!.split('.')[1]);
      expect(seen).not.toContain('poolscope_');
      // ... and replaying everything it received, as it was sent, cannot act as the user.
      for (const { headers } of listener.received) {
        const replay = Object.fromEntries(
          Object.entries(headers).filter(([k, v]) => typeof v === 'string' && !['host', 'content-length'].includes(k)),
        ) as Record<string, string>;
        const res = await request.post('/api/alerts/silences', { data: silence, headers: replay });
        expect(res.status(), JSON.stringify(replay)).toBe(401);
      }
      // Nor did the other port's own request through the browser create anything.
      const session = await apiLoginAs(request, 'operator');
      const silences = (await (await request.get('/api/alerts', { headers: session })).json()) as { silences: { target: string | null }[] };
      expect(silences.silences.filter((s) => s.target === silence.target)).toEqual([]);
      // Back on Poolscope, the operator is still logged in (the tab kept its session).
      await page.goto('/');
      await expect(page.getByTestId('user-role')).toHaveText('operator');
    } finally {
      await request.dispose();
      await listener.close();
    }
  });
});
