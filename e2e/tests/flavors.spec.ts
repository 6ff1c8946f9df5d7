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
      // Before 8.4.10-10 (8.4 here is 8.4.8-8) there is no queue depth or queue-wait statistic.
      await expect(target.poolPanel.getByTestId('queue-wait-stats')).toHaveCount(0);
      await expect(target.poolPanel.getByTestId('pool-queue-depth')).toHaveCount(0);
      await expect(target.flavorChart('chart-queue-wait-window')).toHaveCount(0);
      await expect(target.flavorChart('chart-queue-depth')).toHaveCount(0);
    });
  }

  test("Percona Server 8.4.10: the whole pool's queue depth and each poll's queue wait, apart from lifetime figures", async ({
    page,
  }) => {
    const target = new TargetPage(page);
    await target.goto('fx-percona-8.4.10');

    await expect(target.version).toContainText(/Percona Server\s+8\.4\.10-10/);
    await expect(target.poolPanel.getByTestId('no-groups-note')).toContainText("whole pool's queue depth");
    // Threadpool_requests_waiting_in_queue / _in_hp_queue: one figure for the whole pool, said so.
    const depth = target.poolPanel.getByTestId('pool-queue-depth');
    await expect(depth).toContainText('whole pool');
    await expect(depth).toContainText(/\d+ \/ \d+/);
    await expect(target.poolPanel.getByTestId('pool-queue-starved')).toBeVisible();
    // The per-poll mean (Δ(avg·cnt)/Δcnt) next to the server's "since start" statistics.
    const stats = target.poolPanel.getByTestId('queue-wait-stats');
    await expect(stats).toContainText('last poll');
    await expect(stats).toContainText('avg since start');
    await expect(target.poolPanel.getByTestId('queue-wait-window-Threadpool_average_queue_wait_us')).toContainText(
      /\d+(\.\d+)? (ms|s)/,
    );
    await expect(target.poolPanel.getByTestId('queue-wait-note')).toContainText('since it started');
    await expect(target.flavorChart('chart-queue-depth')).toBeVisible();
    await expect(target.flavorChart('chart-queue-depth')).toContainText('not one per group');
    await expect(target.flavorChart('chart-queue-wait-window')).toBeVisible();
    await expect(target.chartSurface(target.flavorChart('chart-queue-wait-window'))).toBeVisible();
    // Still no per-group panels: the count is not spread over invented groups.
    await expect(target.groupsPanel).toHaveCount(0);
    await expect(target.heatmap).toHaveCount(0);
  });

  test('AliSQL: recognised from its Percona-compatible variables, with a note saying so', async ({ page }) => {
    const target = new TargetPage(page);
    await target.goto('fx-alisql-5.6');

    await expect(target.poolKind).toHaveText('Percona thread pool');
    await expect(target.serverNotes).toContainText('Percona-derived pool');
    await expect(target.poolPanel.getByTestId('pool-size')).toContainText('24');
    await expect(target.poolPanel.getByTestId('pool-high-prio-mode')).toContainText('transactions');
    await expect(target.groupsPanel).toHaveCount(0);
  });

  for (const version of ['8.0', '8.4', '9.7'] as const) {
    test(`MySQL Enterprise ${version}: tp_* tables as thread groups, stall limit in 10 ms units`, async ({ page }) => {
      const target = new TargetPage(page);
      await target.goto(`fx-mysql-enterprise-${version}`);

      await expect(target.version).toContainText(new RegExp(`MySQL Enterprise\\s+${version.replace('.', '\\.')}\\.\\d+-commercial`));
      await expect(target.poolKind).toHaveText('MySQL Enterprise thread_pool plugin');
      // Four groups: the Admin thread group's row (8.0.31+) is not one of them.
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

    test(`MySQL Enterprise ${version}: pool threads by state and wait, the Admin group on its own`, async ({ page }) => {
      const target = new TargetPage(page);
      await target.goto(`fx-mysql-enterprise-${version}`);

      await expect(target.poolPanel.getByTestId('pool-admin-group')).toContainText('Admin thread group (#4)');
      // Threads by what they wait on, with the manual's THD_WAIT_* names.
      const threads = target.poolPanel.getByTestId('pool-thread-states');
      await expect(threads).toContainText('THD_WAIT_');
      if (version === '8.0') {
        // STATE and MARKED_STALLED arrived in 8.4.
        await expect(threads.getByTestId('thread-marked-stalled')).toHaveCount(0);
        await expect(threads.getByTestId('thread-state-Polling')).toHaveCount(0);
      } else {
        await expect(threads.getByTestId('thread-marked-stalled')).toBeVisible();
        await expect(threads.getByTestId('thread-state-Polling')).toContainText('4');
      }
    });
  }

  test('MySQL Enterprise, monitoring user without SELECT on performance_schema: pool on, grant needed', async ({ page }) => {
    const target = new TargetPage(page);
    await target.goto('fx-mysql-enterprise-8.4-no-grant');

    await expect(target.grantNeeded).toContainText('Thread pool on — grant SELECT ON performance_schema.* to read it');
    await expect(target.grantNeeded).toContainText('GRANT SELECT ON performance_schema.*');
    await expect(target.poolKind).toHaveText('MySQL Enterprise thread_pool plugin');
    // Not "thread pool off", and no advice to turn on a pool that is already on.
    await expect(target.poolOffNotice).toHaveCount(0);
    await expect(page.getByTestId('pool-off-enable-hint')).toHaveCount(0);
    await expect(target.groupsPanel).toHaveCount(0);
  });

  test('Alibaba Cloud RDS: the pool switched by thread_pool_enabled is on, whatever thread_handling says', async ({ page }) => {
    const target = new TargetPage(page);
    await target.goto('fx-alibaba-rds-8.0');

    await expect(target.serverNotes).toContainText('thread_pool_enabled=ON');
    await expect(target.poolOffNotice).toHaveCount(0);
    await expect(target.poolPanel.getByTestId('pool-size')).toContainText('4');
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
  await page.goto('/?view=cards');
  const card = (name: string) => page.getByTestId(`target-card-${name}`);
  await expect(card('fx-percona-8.4').getByTestId('target-version')).toContainText('Percona Server 8.4.8-8');
  await expect(card('fx-percona-8.4').getByTestId('summary-pool-threads')).toBeVisible();
  await expect(card('fx-percona-8.4').getByTestId('summary-queue-length')).toHaveCount(0);
  await expect(card('fx-percona-8.4').getByTestId('summary-queued-pool')).toHaveCount(0);
  await expect(card('fx-percona-8.4.10').getByTestId('summary-queued-pool')).toContainText(/\d+/);
  await expect(card('fx-mysql-enterprise-8.0').getByTestId('target-version')).toContainText('MySQL Enterprise 8.0.36-commercial');
  await expect(card('fx-mysql-enterprise-8.0').getByTestId('summary-stalled-groups')).toContainText('/ 4');
  // The Admin thread group is not counted among the groups.
  await expect(card('fx-mysql-enterprise-9.7').getByTestId('summary-stalled-groups')).toContainText('/ 4');
});
