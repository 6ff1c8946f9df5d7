// User story: on an install with users and without anonymous_read, someone who has not logged in sees the
// login page and no data; after logging in the same URL shows the page. (The main stack reads anonymously.)
import { OverviewPage } from '../pages/overview-page';
import { passwordFor } from '../support/auth';
import { expect, test } from '../support/fixtures';
import { LOCKED_TARGET } from '../support/stack';

test.describe('reads need a login', () => {
  test('every read of the API answers 401 without a session', async ({ playwright, stack }) => {
    const request = await playwright.request.newContext({ baseURL: stack.lockedBaseURL });
    try {
      const reads = ['/api/targets', `/api/targets/${LOCKED_TARGET}/state`, `/api/targets/${LOCKED_TARGET}/queue`];
      reads.push('/api/alerts', '/api/snapshots', '/api/live');
      for (const path of reads) {
        const res = await request.get(path);
        expect(res.status(), path).toBe(401);
        expect(await res.text(), path).not.toContain('SELECT');
      }
      expect((await request.get('/api/health')).status()).toBe(200);
    } finally {
      await request.dispose();
    }
  });

  test('the UI shows the login page and no data, then the page once logged in', async ({ page, stack }) => {
    const targetUrl = `${stack.lockedBaseURL}/targets/${LOCKED_TARGET}`;
    await page.goto(targetUrl);
    await expect(page.getByTestId('login-page')).toBeVisible();
    await expect(page.getByTestId('login-note')).toContainText('log in to read');
    await expect(page.getByTestId('target-page')).toHaveCount(0);
    await expect(page.getByTestId('state-poll-time')).toHaveCount(0);

    await page.getByTestId('login-username').fill('viewer');
    await page.getByTestId('login-password').fill(passwordFor('viewer'));
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('user-name')).toHaveText('viewer');
    await expect(page).toHaveURL(targetUrl);
    await expect(page.getByTestId('state-poll-time')).toBeVisible();

    await page.goto(`${stack.lockedBaseURL}/?view=cards`);
    await expect(new OverviewPage(page).card(LOCKED_TARGET).root).toBeVisible();

    await page.getByTestId('logout').click();
    await expect(page.getByTestId('login-page')).toBeVisible();
    await expect(page.getByRole('article')).toHaveCount(0);
  });

  test('with anonymous_read the pages need no login, but a change still does', async ({ page, request, stack }) => {
    await new OverviewPage(page).goto();
    await expect(new OverviewPage(page).card(stack.targets.poolOn).root).toBeVisible();
    await expect(page.getByTestId('login-link')).toBeVisible();
    const change = await request.post(`/api/targets/${stack.targets.poolOn}/snapshots`);
    expect(change.status()).toBe(401);
  });
});
