// User story: the pool stalls; the operator sees who holds the stalled group right now, then opens the
// stall's band on a chart and reads who held the pool during it: the long CPU-bound statement first by
// stalled seconds, the short queries that waited behind it far below; then ranks by queued seconds.
import { TargetPage } from '../pages/target-page';
import { expect, test } from '../support/fixtures';

const HOLDER = 'SELECT BENCHMARK(?, MD5(?))';

test('a stall band opens who held the pool during the stall', async ({ page, stack, provokeStall }) => {
  test.setTimeout(180_000);
  provokeStall();
  const target = new TargetPage(page);
  await target.goto(stack.targets.poolOn, '?range=5m');

  // Live: the strip names the holder of the stalled group while it lasts.
  await expect(target.holdersStrip).toContainText(HOLDER, { timeout: 90_000 });
  await expect(target.holdersStrip).toContainText(/stalled/);

  const stall = target.bands('chart-throughput').and(page.locator('[data-kind="stall"]')).first();
  await expect(stall).toBeVisible({ timeout: 60_000 });
  // The stall's alert band starts at the same moment and lies over it: the stall's own handle is
  // reached from the keyboard, as a keyboard user would.
  await stall.focus();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/[?&]held=1(&|$)/);
  await expect(page).toHaveURL(/[?&]from=\d+&to=\d+/);

  await expect(target.heldPanel).toBeInViewport();
  const top = target.heldRows.first();
  await expect(top).toContainText(HOLDER);
  await expect(top).toContainText(/sbtest@/);
  const column = async (n: number) =>
    Promise.all((await target.heldRows.all()).map(async (row) => Number(await row.locator('td').nth(n).innerText())));
  const stalled = await column(1);
  expect(stalled[0]).toBeGreaterThan(0);
  // The short queries that queued behind it are listed too (under "not read yet" when their
  // connection ran too briefly to be seen), far below it by stalled seconds.
  expect(stalled.length).toBeGreaterThan(1);
  expect(stalled.slice(1).every((v) => v < stalled[0] / 2)).toBe(true);

  // Ranked by queued seconds instead: the column is in order, largest first.
  await target.heldSort('queued').click();
  await expect(target.heldSort('queued')).toHaveAttribute('aria-pressed', 'true');
  await expect
    .poll(async () => {
      const queued = await column(3);
      return queued.length > 1 && queued.every((v, i) => i === 0 || v <= queued[i - 1]) && queued[0] > 0;
    })
    .toBe(true);
});
