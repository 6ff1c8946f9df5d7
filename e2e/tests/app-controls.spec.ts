// User stories: an operator switches between the light and the dark theme (the system's by default);
// pauses refreshing to read a page that holds still; and works a dialog from the keyboard alone.
import { ChangesPanel } from '../pages/changes';
import { TargetPage } from '../pages/target-page';
import { loginAs } from '../support/auth';
import { expect, test } from '../support/fixtures';

const background = (page: import('@playwright/test').Page) =>
  page.evaluate(() => getComputedStyle(document.body).backgroundColor);

test.describe('app controls', () => {
  test('the theme follows the system until one is chosen, and the choice holds', async ({ page }) => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto('/');
    await expect(page.getByTestId('overview-page')).toBeVisible();
    const light = await background(page);
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await background(page);
    expect(light).not.toBe(dark);

    // Chosen: the system's scheme no longer decides.
    await page.getByTestId('theme-select').selectOption('light');
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    expect(await background(page)).toBe(light);
    await page.reload();
    expect(await background(page)).toBe(light);
    await page.getByTestId('theme-select').selectOption('system');
    await expect(page.locator('html')).not.toHaveAttribute('data-theme');
    expect(await background(page)).toBe(dark);
  });

  test('pause holds the page still and resume brings it back', async ({ page, stack, api }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOn);
    await expect(target.liveStatus).toHaveAttribute('data-status', 'open');
    await page.getByTestId('refresh-pause').click();
    await expect(target.liveStatus).toHaveAttribute('data-status', 'paused');
    const held = await target.lastPollTime();
    // Two newer polls exist (and reached the open stream): the paused page still shows the one it held.
    const heldTs = Date.parse(held) / 1000;
    await expect.poll(async () => (await api.state(stack.targets.poolOn)).ts, { timeout: 15_000 }).toBeGreaterThan(heldTs + 1);
    expect(await target.lastPollTime()).toBe(held);
    await page.getByTestId('refresh-pause').click();
    await expect.poll(() => target.lastPollTime(), { timeout: 15_000 }).not.toBe(held);
  });

  test('a dialog keeps the keyboard inside and closes on Escape', async ({ page, stack, admin }) => {
    const VARIABLE = 'extra_max_connections';
    const original = admin.globals([VARIABLE])[VARIABLE];
    // One extra_port slot, already Poolscope's: the headroom rule recommends more, with an Apply button.
    admin.setGlobals({ [VARIABLE]: 1 });
    try {
      await loginAs(page, 'operator');
      await new TargetPage(page).goto(stack.targets.poolOn);
      const changes = new ChangesPanel(page);
      const apply = changes.applyButton(VARIABLE);
      await expect(apply).toBeVisible({ timeout: 30_000 });
      await apply.click();
      await expect(changes.dialog).toBeVisible();
      await expect(changes.dialogProposed).toHaveText('3');
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press(i % 3 === 2 ? 'Shift+Tab' : 'Tab');
        expect(await changes.dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
      }
      await page.keyboard.press('Escape');
      await expect(changes.dialog).toHaveCount(0);
      await expect(apply).toBeFocused();
      expect(admin.globals([VARIABLE])[VARIABLE]).toBe('1');
    } finally {
      admin.setGlobals({ [VARIABLE]: original });
    }
  });
});
