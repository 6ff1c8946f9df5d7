// User story: an operator looks back over different time ranges and shares the link; the range lives in the URL.
import { TargetPage, type RangeChoice } from '../pages/target-page';
import { expect, test } from '../support/fixtures';

const CHOICES: { choice: RangeChoice; param: string; label: RegExp }[] = [
  { choice: '5m', param: '5m', label: /Last 5m/ },
  { choice: '1h', param: '1h', label: /Last 1h/ },
  { choice: '24h', param: '24h', label: /Last 24h/ },
  { choice: 'Live', param: 'live', label: /Live/ },
];

test.describe('time range', () => {
  test('5m / 1h / 24h / Live go into the URL and survive a reload', async ({ page, stack }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOn);
    await expect(target.rangeButton('Live')).toHaveAttribute('aria-pressed', 'true');

    for (const { choice, param, label } of CHOICES) {
      await test.step(`choose ${choice}`, async () => {
        await target.chooseRange(choice);
        await expect(page).toHaveURL(new RegExp(`[?&]range=${param}(&|$)`));
        await expect(target.rangeButton(choice)).toHaveAttribute('aria-pressed', 'true');
        await expect(target.historyRange).toContainText(label);

        await page.reload();
        await expect(target.rangeButton(choice)).toHaveAttribute('aria-pressed', 'true');
        await expect(target.historyRange).toContainText(label);
        await expect(page).toHaveURL(new RegExp(`[?&]range=${param}(&|$)`));
      });
    }
  });

  test('back and forward restore the previous range', async ({ page, stack }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOn, '?range=live');
    await target.chooseRange('1h');
    await expect(page).toHaveURL(/range=1h/);

    await page.goBack();
    await expect(page).toHaveURL(/range=live/);
    await expect(target.rangeButton('Live')).toHaveAttribute('aria-pressed', 'true');
    await page.goForward();
    await expect(target.rangeButton('1h')).toHaveAttribute('aria-pressed', 'true');
  });

  test('a custom range opened from a shared URL', async ({ page, stack }) => {
    const target = new TargetPage(page);
    const to = Math.floor(Date.now() / 1000);
    const from = to - 3600;
    await target.goto(stack.targets.poolOn, `?from=${from}&to=${to}`);

    await expect(target.rangeButton('Custom')).toHaveAttribute('aria-pressed', 'true');
    await expect(target.historyRange).toContainText('Custom');
    // The stack has been polling for a while inside that hour: the charts have something to draw.
    await expect(target.chartSurface(target.chart('chart-throughput'))).toBeVisible();

    await page.reload();
    await expect(page).toHaveURL(new RegExp(`from=${from}&to=${to}`));
    await expect(target.rangeButton('Custom')).toHaveAttribute('aria-pressed', 'true');
  });

  test('a custom range picked in the form is written to the URL', async ({ page, stack }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOn);

    await target.rangeButton('Custom').click();
    await expect(target.customFrom).toBeVisible();
    const fromText = '2024-01-02T03:04';
    const toText = '2024-01-02T05:06';
    await target.customFrom.fill(fromText);
    await target.customTo.fill(toText);
    await target.applyCustomRange.click();

    // datetime-local is the browser's local time: let the browser do the conversion.
    const [from, to] = await page.evaluate(
      ([f, t]) => [Math.floor(new Date(f).getTime() / 1000), Math.floor(new Date(t).getTime() / 1000)],
      [fromText, toText],
    );
    await expect(page).toHaveURL(new RegExp(`[?&]from=${from}&to=${to}`));
    await expect(target.historyRange).toContainText('Custom');
    // Nothing was recorded in 2024: the page says so instead of drawing empty axes.
    await expect(page.getByTestId('no-data')).toContainText(/No data in range/i);
  });
});
