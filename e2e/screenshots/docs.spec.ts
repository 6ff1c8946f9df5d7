// Screenshots for the documentation (docs/images/), from `make demo`: the overview, the target page
// during a stall, the alerts page and the offline report, each in the light and the dark theme.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { REPO_DIR } from '../support/stack';

const OUT = path.join(REPO_DIR, 'docs', 'images');
const THEMES = ['light', 'dark'] as const;
/** The demo's load stalls the pool once a cycle (backend/dev/poolscope_dev/demoload.py). */
const STALL_WAIT_MS = 8 * 60_000;

async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  // Charts draw once laid out; give the last frame a moment.
  await page.waitForTimeout(800);
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage, animations: 'disabled' });
}

async function theme(page: Page, t: (typeof THEMES)[number]): Promise<void> {
  await page.emulateMedia({ colorScheme: t });
}

test.beforeAll(() => mkdirSync(OUT, { recursive: true }));

test('the pages during a stall, and its report, in both themes', async ({ page, request }) => {
  // Demo logins are the operator's (its password in .demo/operator-password).
  const password = readFileSync(path.join(REPO_DIR, '.demo', 'operator-password'), 'utf8').trim();
  const login = await request.post('/api/auth/login', { data: { username: 'operator', password } });
  expect(login.status(), await login.text()).toBe(200);
  const auth = { Authorization: `Bearer ${((await login.json()) as { token: string }).token}` };

  // The target page, once a group stalls: the one-line summary says so.
  await page.goto('/targets/sandbox?range=live');
  await expect(page.getByTestId('now-summary')).toContainText(/stalled \d/, { timeout: STALL_WAIT_MS });
  // A few seconds into the stall, so the bands and the queue show it.
  await page.waitForTimeout(8000);
  const snapshot = await request.post('/api/targets/sandbox/snapshots', {
    headers: auth,
    data: { title: 'sandbox: group stalled during make demo' },
  });
  expect(snapshot.status(), await snapshot.text()).toBe(201);
  const id = ((await snapshot.json()) as { id: number }).id;
  for (const t of THEMES) {
    await theme(page, t);
    await page.setViewportSize({ width: 1440, height: 1500 });
    await shot(page, `target-page-${t}`);
  }

  await page.setViewportSize({ width: 1440, height: 1000 });
  await page.goto('/');
  await expect(page.getByTestId('fleet')).toBeVisible();
  for (const t of THEMES) {
    await theme(page, t);
    await shot(page, `overview-${t}`);
  }

  await page.goto('/alerts');
  await expect(page.getByTestId('alerts-history')).toBeVisible();
  for (const t of THEMES) {
    await theme(page, t);
    await shot(page, `alerts-${t}`);
  }

  // The offline report: as the UI downloads it, opened from disk with no network.
  const file = path.join(OUT, '..', '..', 'e2e', 'test-results', 'screenshots', `report-${id}.html`);
  mkdirSync(path.dirname(file), { recursive: true });
  for (const t of THEMES) {
    // The window completes after window_after_s; the report of the moment is what a colleague gets.
    const report = await request.get(`/api/snapshots/${id}/report.html?theme=${t}`, { headers: auth });
    expect(report.status()).toBe(200);
    writeFileSync(file, await report.text());
    const offline = await page.context().browser()!.newContext({ offline: true, viewport: { width: 1440, height: 1300 } });
    try {
      const reader = await offline.newPage();
      await reader.goto(`file://${file}`);
      await expect(reader.getByTestId('report-title')).toBeVisible();
      await reader.waitForTimeout(500);
      await reader.screenshot({ path: path.join(OUT, `report-${t}.png`) });
    } finally {
      await offline.close();
    }
  }
});
