// User story: opening a target during an incident, the operator reads what is wrong in one line at the top,
// and the long tables show the worst rows first instead of a page-long scroll.
import { TargetPage } from '../pages/target-page';
import { expect, test } from '../support/fixtures';

test.describe('the target page at a glance', () => {
  test('long tables show their worst 10 rows, all of them on asking, and a CSV of every row', async ({
    page,
    stack,
    load,
  }) => {
    test.setTimeout(120_000);
    // Lock holders and waiters: every waiter is listed (lock waits always are), more than 10 of them.
    load.start('trx', { durationS: 90, connections: 30 });
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOn);
    await expect(target.nowSummary).toContainText(/^Now: \d+ groups, /);

    await expect(target.transactionsShowAll).toHaveText(/^show all \(\d+\)$/, { timeout: 60_000 });
    await expect(target.transactionRows).toHaveCount(10);
    // Worst first: lock waits lead.
    await expect(target.transactionRows.first()).toContainText('LOCK WAIT');
    // Ages in whole seconds, as the server keeps them.
    await expect(target.transactionsTable).not.toContainText(/\b\d+\.\d s\b/);

    const download = page.waitForEvent('download');
    await page.getByTestId('trx-csv').click();
    const csv = await (await download).path();
    const { readFileSync } = await import('node:fs');
    const lines = readFileSync(csv, 'utf8').trim().split('\r\n');
    expect(lines[0]).toBe('trx_id,state,started_at,age_s,lock_wait_s,thread_id,user,host,db,rows_locked,rows_modified,sql');
    expect(lines.length - 1).toBeGreaterThan(10);

    // The toggle sits above the rows: the live table re-rendering every poll never moves it under the pointer.
    // (Its line is followed by the table; retried, since a poll may list 10 or fewer for a moment.)
    await expect(target.transactionsShowAll.locator('xpath=../following-sibling::table')).toHaveAttribute(
      'data-testid',
      'trx-table',
    );
    await target.transactionsShowAll.click();
    await expect(target.transactionsShowAll).toHaveText('show the first 10');
    expect(await target.transactionRows.count()).toBeGreaterThan(10);
    await target.transactionsShowAll.click();
    await expect(target.transactionRows).toHaveCount(10);
  });
});
