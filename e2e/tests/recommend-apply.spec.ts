// User story: an operator sees a recommendation with its evidence, applies it in one click, finds it in the
// audit list and on the charts (guarded by default), and reverts it after a confirmation; the server's
// variable follows every step.
import { ChangesPanel } from '../pages/changes';
import { TargetPage } from '../pages/target-page';
import { apiLoginAs, loginAs } from '../support/auth';
import { expect, test } from '../support/fixtures';

const VARIABLE = 'extra_max_connections';

test.describe('recommendations and one-click apply', () => {
  test('an operator applies a recommendation, sees it audited and on the charts, and reverts it', async ({
    page,
    stack,
    admin,
  }) => {
    const original = admin.globals([VARIABLE])[VARIABLE];
    // One extra_port slot, already taken by Poolscope's own polling: the headroom rule must speak.
    admin.setGlobals({ [VARIABLE]: 1 });
    try {
      await loginAs(page, 'operator');
      const target = new TargetPage(page);
      const changes = new ChangesPanel(page);
      await target.goto(stack.targets.poolOn);

      const rec = changes.recommendation(VARIABLE);
      await expect(rec).toBeVisible({ timeout: 30_000 });
      await expect(rec.getByTestId('rec-change')).toHaveText(`${VARIABLE}: 1 → 3`);
      await expect(rec.getByTestId('rec-evidence')).toContainText('extra_port');

      await changes.applyButton(VARIABLE).click();
      await expect(changes.dialogCurrent).toHaveText('1');
      await expect(changes.dialogProposed).toHaveText('3');
      await expect(changes.dialog.getByTestId('apply-what-happens')).toContainText('until the server restarts');
      // Guarded unless the operator unticks it (guard_by_default).
      await expect(changes.dialog.getByTestId('apply-guard')).toBeChecked();
      await changes.confirm.click();
      await expect(changes.dialog).toHaveCount(0);
      await expect.poll(() => admin.globals([VARIABLE])[VARIABLE]).toBe('3');

      const row = changes.auditRows(VARIABLE).first();
      await expect(row).toBeVisible();
      await expect(row.getByTestId('audit-values')).toHaveText('1 → 3');
      await expect(row).toHaveAttribute('data-result', 'applied');
      await expect(row).toContainText('operator');
      await expect(row.getByTestId('audit-guard')).toContainText('watching');
      await expect(row.getByTestId('audit-manual')).toHaveCount(0); // a recommendation is behind it
      const id = Number((await row.getAttribute('data-testid'))?.replace('audit-row-', ''));
      expect(id).toBeGreaterThan(0);

      // The change is a marker on the charts (a line across the plot and its label).
      await expect(changes.chartMarkers('chart-throughput')).toContainText(`#${id} ${VARIABLE} 1 → 3`, { timeout: 20_000 });
      await expect(changes.chartMarkerLines('chart-throughput')).not.toHaveCount(0);
      // The change's verdict: the load before and after, and the judged metrics at matched load.
      await page.getByTestId(`audit-compare-${id}`).click();
      const compare = page.getByTestId('compare-table');
      await expect(compare.getByTestId('compare-qps')).toContainText('QPS');
      await expect(compare.getByTestId('compare-tp_queue_wait_avg_ms')).toBeVisible();
      // Its window after is still running: no verdict yet.
      await expect(compare.getByTestId('compare-verdict')).toHaveText('inconclusive');
      await expect(compare.getByTestId('compare-headline')).toContainText('still running');
      // Fulfilled: the recommendation goes away.
      await expect(changes.recommendation(VARIABLE)).toHaveCount(0, { timeout: 20_000 });

      // Revert asks first, naming the value it puts back; Cancel changes nothing.
      await changes.revertButton(id).click();
      await expect(changes.dialog.getByTestId('revert-restores')).toHaveText('1');
      await changes.dialog.getByTestId('revert-cancel').click();
      await expect(changes.dialog).toHaveCount(0);
      expect(admin.globals([VARIABLE])[VARIABLE]).toBe('3');
      await changes.revertButton(id).click();
      await changes.dialog.getByTestId('revert-confirm').click();
      await expect.poll(() => admin.globals([VARIABLE])[VARIABLE]).toBe('1');
      await expect(changes.auditRow(id)).toContainText(`reverted by #`);
      await expect(changes.audit).toContainText(`revert of #${id}`);
    } finally {
      admin.setGlobals({ [VARIABLE]: original });
    }
  });

  test('a viewer sees recommendations but cannot apply; the API refuses too', async ({ page, playwright, stack, admin }) => {
    await loginAs(page, 'viewer');
    const before = admin.globals(['thread_pool_stall_limit']).thread_pool_stall_limit;
    await new TargetPage(page).goto(stack.targets.poolOn);
    await expect(page.getByTestId('recommendations-panel')).toBeVisible();
    await expect(page.locator('[data-testid^="rec-apply-"]')).toHaveCount(0);

    const request = await playwright.request.newContext({ baseURL: stack.baseURL });
    try {
      const session = await apiLoginAs(request, 'viewer');
      const res = await request.post(`/api/targets/${stack.targets.poolOn}/apply`, {
        data: { variable: 'thread_pool_stall_limit', value: '40' },
        headers: session,
      });
      expect(res.status()).toBe(403);
      expect((await res.json()).detail).toContain('operator');
    } finally {
      await request.dispose();
    }
    expect(admin.globals(['thread_pool_stall_limit']).thread_pool_stall_limit).toBe(before);
  });
});
