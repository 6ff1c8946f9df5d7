// User stories: during an incident an operator zooms into the charts by dragging, steps back and forth in
// time and undoes it all with Back; reads times in UTC or in local time; opens an alert from the alert
// list straight onto its charts with the alert's band marked; and asks a chart what it shows.
import { TargetPage } from '../pages/target-page';
import { expect, test } from '../support/fixtures';

const rangeOf = (url: string) => {
  const q = new URL(url).searchParams;
  return { from: Number(q.get('from')), to: Number(q.get('to')), range: q.get('range') };
};

test.describe('charts for an incident', () => {
  test('dragging across a chart zooms into that span; earlier, later and Back move through the ranges', async ({
    page,
    stack,
  }) => {
    const target = new TargetPage(page);
    // The last 5 minutes: the stack has polled all of them, so the zoomed span has data too.
    await target.goto(stack.targets.poolOn, '?range=5m');
    const chart = target.chart('chart-threads');
    await expect(target.chartSurface(chart)).toBeVisible();
    expect(rangeOf(page.url()).range).toBe('5m');

    await target.dragAcross(chart, 0.5, 0.9);
    await expect(page).toHaveURL(/[?&]from=\d+&to=\d+/);
    const zoomed = rangeOf(page.url());
    // Two fifths of the 5 minutes, about: the drag went from the middle to nine tenths.
    expect(zoomed.to - zoomed.from).toBeGreaterThan(90);
    expect(zoomed.to - zoomed.from).toBeLessThan(150);
    await expect(target.rangeButton('Custom')).toHaveAttribute('aria-pressed', 'true');
    await expect(target.chartSurface(chart)).toBeVisible();

    await target.earlier.click();
    const earlier = rangeOf(page.url());
    expect(earlier.to - earlier.from).toBe(zoomed.to - zoomed.from);
    expect(zoomed.from - earlier.from).toBe(Math.floor((zoomed.to - zoomed.from) / 2));
    await target.later.click();
    expect(rangeOf(page.url())).toEqual(zoomed);

    // Back undoes each move: the later step, the earlier step, the zoom.
    await page.goBack();
    expect(rangeOf(page.url())).toEqual(earlier);
    await page.goBack();
    expect(rangeOf(page.url())).toEqual(zoomed);
    await page.goBack();
    await expect(page).toHaveURL(/[?&]range=5m(&|$)/);
    await expect(target.rangeButton('5m')).toHaveAttribute('aria-pressed', 'true');
  });

  test.describe('in a time zone that is not UTC', () => {
    test.use({ timezoneId: 'Asia/Kolkata' });

    test('the time-zone switch puts every axis, tooltip and time in UTC and back', async ({ page, stack }) => {
      const target = new TargetPage(page);
      await target.goto(stack.targets.poolOn);
      // The poll time the page shows is the poll's moment in the chosen zone (the clock shown and the
      // moment are read in one step: polls move on meanwhile).
      const shownIn = async (timeZone: string) => {
        const { clock, iso } = await target.lastPollShown();
        return clock === new Date(iso).toLocaleTimeString('en-GB', { timeZone, hour12: false });
      };
      await expect(target.chartZone('chart-threads')).toHaveText('GMT+5:30');
      await expect.poll(() => shownIn('Asia/Kolkata')).toBe(true);

      await page.getByTestId('tz-utc').click();
      await expect(page.getByTestId('tz-utc')).toHaveAttribute('aria-pressed', 'true');
      await expect(target.chartZone('chart-threads')).toHaveText('UTC');
      await expect(target.chartZone('chart-queue-length')).toHaveText('UTC');
      await expect.poll(() => shownIn('UTC')).toBe(true);
      // The tooltip names the zone.
      await target.chart('chart-threads').scrollIntoViewIfNeeded();
      const box = await target.chart('chart-threads').locator('.chart-box').boundingBox();
      await page.mouse.move(box!.x + box!.width * 0.8, box!.y + box!.height / 2);
      await expect(target.chart('chart-threads').locator('.recharts-tooltip-label')).toContainText(/ UTC$/);

      // The choice holds across a reload, and goes back as easily.
      await page.reload();
      await expect(target.chartZone('chart-threads')).toHaveText('UTC');
      await page.getByTestId('tz-local').click();
      await expect(target.chartZone('chart-threads')).toHaveText('GMT+5:30');
    });
  });

  test("an alert row opens the target's charts at the alert's time, with its band marked", async ({
    page,
    stack,
    provokeStall,
  }) => {
    test.setTimeout(180_000);
    provokeStall();
    await page.goto('/alerts');
    const row = page
      .locator(`[data-testid="alert-row"][data-rule="group_stalled"][data-target="${stack.targets.poolOn}"]`)
      .first();
    await expect(row).toBeVisible({ timeout: 90_000 });
    await row.getByTestId('alert-charts-link').click();

    await expect(page).toHaveURL(new RegExp(`/targets/${stack.targets.poolOn}\\?.*alert=(\\d+)`));
    const id = new URL(page.url()).searchParams.get('alert');
    const { from, to } = rangeOf(page.url());
    expect(to).toBeGreaterThan(from);
    const target = new TargetPage(page);
    await expect(target.rangeButton('Custom')).toHaveAttribute('aria-pressed', 'true');
    for (const chart of ['chart-queue-length', 'chart-threads'] as const) {
      const band = target.bands(chart).and(page.locator(`[data-alert="${id}"]`));
      await expect(band).toBeVisible();
      await expect(band).toHaveAttribute('data-highlight', 'true');
      await expect(band).toHaveAccessibleName(/stalled/);
    }
    // The stall itself is a band too, on every chart of the target.
    await expect(target.bands('chart-throughput').and(page.locator('[data-kind="stall"]')).first()).toBeVisible();
  });

  test("a chart's help says what it shows, from the metric catalog, with units", async ({ page, stack }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOn);
    const help = target.chartHelp('chart-queue-time');
    await expect(help).toHaveAccessibleName('About this chart');
    await help.click();
    const text = page.getByTestId('chart-queue-time-help-text');
    await expect(text).toContainText('longest queueing time of a queued request');
    await expect(text).toContainText('milliseconds');
    await page.keyboard.press('Escape');
    await expect(text).toBeHidden();

    await target.chartHelp('chart-throughput').click();
    await expect(page.getByTestId('chart-throughput-help-text')).toContainText('per second');
  });
});
