// User story: when something is wrong (server down, wrong link, degraded setup) the page says what and why.
import { TargetPage } from '../pages/target-page';
import { expect, test } from '../support/fixtures';

test.describe('error states', () => {
  test('the page of an unreachable target says it is down and why', async ({ page, stack }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.unreachable);

    await expect(target.heading).toHaveText(stack.targets.unreachable);
    await expect(target.status).toHaveText('down');
    await expect(target.downNotice).toContainText('Target is down');
    await expect(target.downReason).toContainText(/connect/i);
    await expect(target.downReason).toContainText(new RegExp(`127\\.0\\.0\\.1:${stack.unreachablePort}(?!\\d)`));
    // It never connected: no "last successful poll" that never happened.
    await expect(target.downNotice).toContainText('No successful poll yet');
    await expect(target.downNotice).not.toContainText('Last successful poll');
    // No group table pretending to know the pool.
    await expect(target.groupTable).toHaveCount(0);
  });

  test('an unknown target shows a clear not-found message', async ({ page }) => {
    const target = new TargetPage(page);
    await target.goto('no-such-target');

    await expect(target.notFound).toBeVisible();
    await expect(target.notFound).toContainText('Unknown target');
    await expect(target.notFound).toContainText('no-such-target');

    await target.notFound.getByRole('link', { name: /overview/i }).click();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Targets' })).toBeVisible();
  });

  test('an unknown page shows page-not-found', async ({ page }) => {
    await page.goto('/no/such/page');
    await expect(page.getByTestId('route-not-found')).toContainText('Page not found');
  });

  test('the pool-off target page explains the pool is off instead of an empty group table', async ({ page, stack }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOff);

    await expect(target.status).toHaveText('up');
    await expect(target.poolOffNotice).toContainText(/thread pool off/i);
    await expect(target.poolOffNotice).toContainText('thread_handling');
    await expect(target.groupsPanel).toHaveCount(0);
    // What still works without the pool is still shown.
    await expect(target.qps).toHaveText(/\d/);
  });

  test('the target page of a user without PROCESS names the missing privilege and the fix', async ({ page, stack }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.noProcess);

    await expect(target.status).toHaveText('up');
    await expect(target.privilegeWarning).toContainText('PROCESS missing');
    await expect(target.privilegeWarning).toContainText(/GRANT PROCESS ON \*\.\*/);
    await expect(target.transactionsPanel).toContainText(/PROCESS privilege/);
  });
});
