// User story: a DBA opens Poolscope on whatever server they run — MariaDB, Percona, MySQL Enterprise,
// AliSQL, or one without a pool — and the target page shows what that server can report, no more.
// The non-MariaDB servers are replayed from backend/tests/fixtures/<flavor>/<version> (fixture:// targets).
import { TargetPage } from '../pages/target-page';
import { expect, test } from '../support/fixtures';

test.describe('flavors', () => {
  test('MariaDB (captured from a live 10.11): groups, heatmap, queue and waits', async ({ page }) => {
    const target = new TargetPage(page);
    await target.goto('fx-mariadb-10.11');

    await expect(target.version).toContainText(/MariaDB\s+10\.11\.\d+/);
    await expect(target.poolKind).toHaveText('MariaDB thread pool');
    await expect(target.serverNotes).toContainText('not a live server');
    await expect(target.groupRows).toHaveCount(2);
    await expect(target.heatmap).toBeVisible();
    await expect(target.queuePanel).toBeVisible();
    await expect(target.waitsPanel).toContainText('THREAD_POOL_WAITS');
    await expect(target.poolPanel.getByTestId('pool-stall-limit')).toContainText('500 ms');
  });

  for (const version of ['5.7', '8.0', '8.4'] as const) {
    test(`Percona Server ${version}: pool threads and priority settings, no per-group panels`, async ({ page }) => {
      const target = new TargetPage(page);
      await target.goto(`fx-percona-${version}`);

      await expect(target.version).toContainText(new RegExp(`Percona Server\\s+${version.replace('.', '\\.')}\\.\\d+`));
      await expect(target.poolKind).toHaveText('Percona thread pool');
      await expect(target.poolPanel.getByTestId('no-groups-note')).toContainText('no per-group tables');
      await expect(target.poolPanel.getByTestId('pool-busy-idle')).toContainText(/\d+ \/ \d+/);
      await expect(target.poolPanel.getByTestId('pool-high-prio-mode')).toContainText('transactions');
      await expect(target.poolPanel.getByTestId('pool-high-prio-tickets')).toContainText('4294967295');
      // Only what Percona can report: no group table, heatmap, queue list or wait reasons.
      await expect(target.groupsPanel).toHaveCount(0);
      await expect(target.heatmap).toHaveCount(0);
      await expect(target.queuePanel).toHaveCount(0);
      await expect(target.waitsPanel).toHaveCount(0);
      await expect(target.chart('chart-queue-length')).toHaveCount(0);
      await expect(target.chart('chart-threads')).toBeVisible();
      if (version === '8.4') {
        // "avg: …, min: …, max: …, dev: …, cnt: …" parsed into numbers, table and chart.
        const row = target.poolPanel.getByTestId('queue-wait-Threadpool_average_queue_wait_us');
        await expect(row).toContainText(/\d+(\.\d+)? ms/);
        await expect(target.flavorChart('chart-queue-wait-stats')).toBeVisible();
      } else {
        await expect(target.poolPanel.getByTestId('queue-wait-stats')).toHaveCount(0);
        await expect(target.flavorChart('chart-queue-wait-stats')).toHaveCount(0);
      }
    });
  }

  test('AliSQL: recognised from its Percona-compatible variables, with a note saying so', async ({ page }) => {
    const target = new TargetPage(page);
    await target.goto('fx-alisql-5.6');

    await expect(target.poolKind).toHaveText('Percona thread pool');
    await expect(target.serverNotes).toContainText('Percona-derived pool');
    await expect(target.poolPanel.getByTestId('pool-size')).toContainText('24');
    await expect(target.poolPanel.getByTestId('pool-high-prio-mode')).toContainText('transactions');
    await expect(target.groupsPanel).toHaveCount(0);
  });

  for (const version of ['8.0', '8.4'] as const) {
    test(`MySQL Enterprise ${version}: tp_* tables as thread groups, stall limit in 10 ms units`, async ({ page }) => {
      const target = new TargetPage(page);
      await target.goto(`fx-mysql-enterprise-${version}`);

      await expect(target.version).toContainText(new RegExp(`MySQL Enterprise\\s+${version.replace('.', '\\.')}\\.\\d+-commercial`));
      await expect(target.poolKind).toHaveText('MySQL Enterprise thread_pool plugin');
      await expect(target.groupRows).toHaveCount(4);
      await expect(target.groupsPanel).toContainText('stall_limit 60 ms');
      await expect(target.groupTable.getByRole('columnheader', { name: 'stalled ratio' })).toBeVisible();
      await expect(page.getByTestId('group-stalled-ratio-0')).toContainText('%');
      await expect(target.heatmap).toBeVisible();
      await expect(target.waitsPanel).toContainText('tp_thread_group_stats');
      await expect(target.waitsPanel).toContainText('ROW_LOCK');
      await expect(target.poolPanel.getByTestId('pool-stall-limit')).toContainText('6 ×10 ms = 60 ms');
      await expect(target.flavorChart('chart-stalled-ratio')).toBeVisible();
      // No per-connection queue on MySQL: that panel is not offered.
      await expect(target.queuePanel).toHaveCount(0);
    });
  }

  test('a future MySQL Enterprise release degrades with a visible note, not an error page', async ({ page }) => {
    const target = new TargetPage(page);
    await target.goto('fx-mysql-enterprise-9.7');

    await expect(target.status).toHaveText('up');
    await expect(target.serverNotes).toContainText('newer than the versions Poolscope knows');
    await expect(target.groupRows).toHaveCount(4);
    await expect(target.collectorsTable.getByRole('row', { name: /mysql_tp_thread_state/ })).toContainText(
      'tp_thread_state not available',
    );
    await expect(page.getByTestId('collector-health')).toHaveCount(0);
  });

  test('MySQL Community (no pool at all): the pool-off view points at the Enterprise plugin', async ({ page }) => {
    const target = new TargetPage(page);
    await target.goto('fx-mysql-community-8.0');

    await expect(target.version).toContainText(/MySQL\s+8\.0\.36/);
    await expect(target.version).not.toContainText('Enterprise');
    await expect(target.poolOffNotice).toContainText('MySQL Enterprise thread_pool plugin');
    await expect(page.getByTestId('pool-off-enable-hint')).toContainText('MySQL Community Server has no thread pool');
    await expect(target.poolOffNotice).toContainText('plugin-load-add  = thread_pool.so');
    // ~100 clients without a pool: ~100 running threads (the seeds' picture), and cache misses.
    await expect(target.poolOffPanel.getByTestId('pool-off-active-sessions')).toContainText('100');
    await expect(target.poolOffPanel.getByTestId('pool-off-cache-miss')).toContainText('%');
    await expect(target.groupsPanel).toHaveCount(0);
    await expect(target.poolPanel).toHaveCount(0);
  });

  test('live MariaDB with the pool off: concurrency without a pool, and how to enable it', async ({ page, stack }) => {
    const target = new TargetPage(page);
    await target.goto(stack.targets.poolOff);

    await expect(target.poolOffNotice).toContainText('restart');
    await expect(target.poolOffNotice).toContainText('thread_handling         = pool-of-threads');
    await expect(target.poolOffPanel.getByTestId('pool-off-active-sessions')).toContainText(/\d+/);
    await expect(target.poolOffPanel.getByTestId('pool-off-running')).toContainText(/\d+ \/ \d+/);
    await expect(target.poolOffPanel.getByTestId('pool-off-cache-miss')).toBeVisible();
    await expect(target.groupsPanel).toHaveCount(0);
    await expect(target.heatmap).toHaveCount(0);
    await expect(target.poolPanel).toHaveCount(0);
    await expect(target.flavorChart('chart-cache-miss')).toBeVisible();
  });
});

test('the overview names each flavor and offers group stats only where groups exist', async ({ page }) => {
  await page.goto('/');
  const card = (name: string) => page.getByTestId(`target-card-${name}`);
  await expect(card('fx-percona-8.4').getByTestId('target-version')).toContainText('Percona Server 8.4.2-2');
  await expect(card('fx-percona-8.4').getByTestId('summary-pool-threads')).toBeVisible();
  await expect(card('fx-percona-8.4').getByTestId('summary-queue-length')).toHaveCount(0);
  await expect(card('fx-mysql-enterprise-8.0').getByTestId('target-version')).toContainText('MySQL Enterprise 8.0.36-commercial');
  await expect(card('fx-mysql-enterprise-8.0').getByTestId('summary-stalled-groups')).toContainText('/ 4');
  await expect(card('fx-mysql-enterprise-9.7').getByTestId('target-notes')).toContainText('newer than the versions');
});
