// User story: an operator acknowledges and silences an alert; their own page shows it at once, and
// a colleague's page, open in another browser, follows through the live feed without a reload. A
// handled alert is greyed with who and until when, and never leads the banner (issue 30).
import { apiLoginAs, loginAs } from '../support/auth';
import { expect, test } from '../support/fixtures';
import type { Alert, AlertsResponse } from '../../frontend/src/api/types';

test.describe('alert state', () => {
  test('ack and silence show at once, and in another open browser through the live feed', async ({ page, browser, stack }) => {
    test.setTimeout(120_000);
    const target = stack.targets.unreachable;
    // The unreachable target's target_down alert: firing target_down_for_s after the stack started.
    await expect
      .poll(
        async () => {
          const body = (await (await page.request.get('/api/alerts')).json()) as AlertsResponse;
          return body.active.find(
            (a: Alert) => a.rule === 'target_down' && a.target === target && a.status === 'firing' && a.id !== null,
          );
        },
        {
          timeout: 60_000,
          message: `no firing target_down alert for ${target}`,
        },
      )
      .toBeTruthy();

    // A colleague's browser (another context: its own session and live feed), left on the alert list.
    const other = await browser.newContext();
    const silencesMade: number[] = [];
    try {
      const colleague = await other.newPage();
      await colleague.goto('/alerts');
      const theirs = colleague
        .getByTestId('alert-row')
        .and(colleague.locator(`[data-rule="target_down"][data-target="${target}"]`));
      await expect(theirs).toBeVisible();
      // From now on the colleague's page cannot read the alert list again: what changes there
      // comes through the live feed only.
      await colleague.route('**/api/alerts', (route) =>
        route.fulfill({ status: 503, json: { detail: 'held back by the test' } }),
      );

      await loginAs(page, 'operator');
      await page.goto('/alerts');
      const row = page.getByTestId('alert-row').and(page.locator(`[data-rule="target_down"][data-target="${target}"]`));
      await expect(row).toBeVisible();
      // An earlier run of this spec against the same stack may have acknowledged it already.
      if ((await row.getAttribute('data-handled')) === 'false') {
        await row.getByTestId('alert-ack').click();
        // At once in this browser: the ack's own answer, not the next refresh.
        await expect(row.getByTestId('alert-acked')).toContainText('acknowledged by operator', { timeout: 5_000 });
      }
      await expect(row.getByTestId('alert-ack')).toHaveCount(0);
      await expect(row).toHaveAttribute('data-handled', 'true');
      // In the colleague's browser, pushed: greyed, with who, and no Acknowledge button left.
      await expect(theirs.getByTestId('alert-acked')).toContainText('acknowledged by operator', { timeout: 10_000 });
      await expect(theirs).toHaveAttribute('data-handled', 'true');
      await expect(theirs).toHaveClass(/alert-row-handled/);
      // A silence made elsewhere is named by the alert list, which the colleague's page reads again.
      await colleague.unroute('**/api/alerts');

      const made = page.waitForResponse((r) => r.url().endsWith('/api/alerts/silences') && r.request().method() === 'POST');
      await row.getByTestId('alert-silence').first().click();
      silencesMade.push(((await (await made).json()) as { id: number }).id);
      const until = /silenced by operator until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/;
      await expect(row.getByTestId('alert-silenced')).toContainText(until, { timeout: 5_000 });
      await expect(theirs.getByTestId('alert-silenced')).toContainText(until, { timeout: 15_000 });

      // Handled alerts never lead the banner: none comes before one that nobody handles.
      for (const p of [page, colleague]) {
        const banner = p.getByTestId('alert-banner');
        await expect(banner).toBeVisible();
        const handled = await p
          .getByTestId('alert-banner-item')
          .evaluateAll((items) => items.map((i) => i.getAttribute('data-handled')));
        expect(handled, 'unhandled alerts first').toEqual(handled.toSorted()); // 'false' < 'true'
        const loud = Number(await banner.getAttribute('data-loud'));
        await expect(banner).toHaveAttribute('role', loud > 0 ? 'alert' : 'status');
      }
    } finally {
      await other.close();
      // The silence would mute this target's alerts for an hour in the specs that follow.
      const headers = await apiLoginAs(page.request, 'operator');
      for (const id of silencesMade) await page.request.delete(`/api/alerts/silences/${id}`, { headers });
    }
  });
});
