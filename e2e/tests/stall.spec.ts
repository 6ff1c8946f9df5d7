// User story: the pool stalls (one group, long CPU-bound statements); the operator sees which group, live.
import { OverviewPage } from '../pages/overview-page';
import { TargetPage } from '../pages/target-page';
import { expect, test } from '../support/fixtures';

test.describe('thread pool stall', () => {
  test('a stalled group is marked while the page keeps updating', async ({ page, stack, stalledPool }) => {
    test.setTimeout(180_000);
    expect(stalledPool.before.thread_pool_size).toBe('2');
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOn);
    await expect(target.groupTable).toBeVisible();

    // thread_pool_size=1 + stall_limit=100 ms + ~3 s statements: the stall shows within a minute.
    const stalledRow = target.stalledGroupRows.first();
    await expect(stalledRow).toBeVisible({ timeout: 60_000 });
    await expect(stalledRow).toHaveAttribute('data-stalled', 'true');
    await expect(stalledRow).toHaveClass(/row-stalled/);
    await expect(stalledRow).toContainText(/STALLED \(/);
    // Visibly marked: the row is tinted, not just labelled.
    await expect(stalledRow).not.toHaveCSS('background-color', 'rgba(0, 0, 0, 0)');
    await expect(target.stalledBanner).toContainText(/thread groups? stalled/);
    await expect(page).toHaveTitle(/stalled/);

    // The poller uses extra_port, so the page keeps getting fresh polls during the stall.
    const during = await target.lastPollTime();
    await expect.poll(() => target.lastPollTime(), { timeout: 15_000, message: 'a newer poll is shown' }).not.toBe(during);
    await expect(target.liveStatus).toHaveAttribute('data-status', 'open');
    // thread_pool_size went from 2 to 1: group 1 is left over and says so.
    await expect(target.retiredBadge(1)).toBeVisible();
  });

  test('the overview flags the stalled target', async ({ page, stack, stalledPool }) => {
    test.setTimeout(180_000);
    void stalledPool; // requesting the fixture is what provokes the stall
    const overview = new OverviewPage(page);
    await overview.goto();

    await expect(overview.stalledBanner).toContainText(stack.targets.poolOn, { timeout: 60_000 });
    await expect(overview.card(stack.targets.poolOn).stalledBadge).toContainText(/stalled group/, { timeout: 30_000 });
  });
});
