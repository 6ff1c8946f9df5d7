// Log in through the real login form as one of the users global setup configured.
import { expect, type APIRequestContext, type Page } from '@playwright/test';

export type E2ERole = 'viewer' | 'operator';

/** The password global setup gave `role` (the user name equals the role). */
export function passwordFor(role: E2ERole): string {
  const key = `POOLSCOPE_E2E_${role.toUpperCase()}_PW`;
  const pw = process.env[key];
  if (!pw) throw new Error(`${key} is not set: global setup did not run (use \`npm test\`)`);
  return pw;
}

/** Fill in the login form at /login and wait until the top bar shows the user. */
export async function loginAs(page: Page, role: E2ERole): Promise<void> {
  await page.goto('/login');
  await page.getByTestId('login-username').fill(role);
  await page.getByTestId('login-password').fill(passwordFor(role));
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('user-name')).toHaveText(role);
  await expect(page.getByTestId('user-role')).toHaveText(role);
}

/** Log in through the API; returns the session header to send with each request. */
export async function apiLoginAs(request: APIRequestContext, role: E2ERole): Promise<Record<string, string>> {
  const res = await request.post('/api/auth/login', { data: { username: role, password: passwordFor(role) } });
  expect(res.status(), await res.text()).toBe(200);
  return { Authorization: `Bearer ${((await res.json()) as { token: string }).token}` };
}

/** The session token the UI keeps for this page's tab (sessionStorage of Poolscope's origin). */
export async function sessionTokenOf(page: Page): Promise<string | null> {
  return page.evaluate(() => sessionStorage.getItem('poolscope.session'));
}
