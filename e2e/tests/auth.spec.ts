// User story: a viewer and an operator log in; nobody can change anything without logging in.
import { apiLoginAs, loginAs } from '../support/auth';
import { expect, test } from '../support/fixtures';

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

  test('the session cookie is HttpOnly and a viewer is a viewer', async ({ page, playwright, stack }) => {
    await loginAs(page, 'viewer');
    const session = (await page.context().cookies()).find((c) => c.name === 'poolscope_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    expect(await page.evaluate(() => document.cookie)).not.toContain('poolscope_session');
    const request = await playwright.request.newContext({ baseURL: stack.baseURL });
    try {
      await apiLoginAs(request, 'viewer');
      expect(await (await request.get('/api/auth/me')).json()).toEqual({ name: 'viewer', role: 'viewer' });
    } finally {
      await request.dispose();
    }
  });
});
