// User story: under load, an operator watches one server's thread pool live: groups, queues, charts, waiting connections.
import { TargetPage } from '../pages/target-page';
import { expect, test } from '../support/fixtures';

test.describe('live target page under load', () => {
  test.beforeEach(async ({ page, stack }) => {
    await new TargetPage(page).goto(stack.targets.poolOn);
  });

  test('shows the server and one row per thread group with its queue length', async ({ page, stack, api }) => {
    const target = new TargetPage(page);
    const server = (await api.target(stack.targets.poolOn)).server;

    await expect(target.heading).toHaveText(stack.targets.poolOn);
    await expect(target.status).toHaveText('up');
    await expect(target.version).toContainText(/MariaDB\s+10\.\d+/);
    await expect(target.version).toContainText(server?.version ?? 'version missing from the API');
    await expect(target.liveStatus).toHaveAttribute('data-status', 'open');

    await expect(target.groupTable).toBeVisible();
    // thread_pool_size = 2 in the sandbox
    await expect(target.groupRows).toHaveCount(2);
    for (const id of [0, 1]) {
      await expect(target.groupQueue(id)).toHaveText(/^\d+$/);
      await expect(target.groupVerdict(id)).toHaveText('ok');
    }
  });

  test('live values change within 30 s', async ({ page }) => {
    const target = new TargetPage(page);
    await expect(target.lastPollClock).toBeVisible();

    // Each poll (every 1 s) reaches the page: the time of the poll shown moves on.
    const firstPoll = await target.lastPollTime();
    expect(firstPoll).toMatch(/\d/);
    await expect.poll(() => target.lastPollTime(), { timeout: 30_000, message: 'a newer poll is shown' }).not.toBe(firstPoll);

    // The workload moves the numbers; exact values are the load's business, not ours.
    await expect(target.qps).toHaveText(/\d/);
    const firstQps = await target.qps.innerText();
    await expect.poll(() => target.qps.innerText(), { timeout: 30_000, message: 'QPS reading changes' }).not.toBe(firstQps);

    // Group queue lengths rise and fall with the waves: collect readings until two differ.
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          seen.add(`${await target.groupQueue(0).innerText()}|${await target.groupQueue(1).innerText()}`);
          return seen.size;
        },
        { timeout: 30_000, message: 'group queue lengths change under load' },
      )
      .toBeGreaterThan(1);
  });

  test('history charts are drawn', async ({ page }) => {
    const target = new TargetPage(page);

    for (const id of ['chart-queue-length', 'chart-queue-time', 'chart-threads', 'chart-throughput', 'chart-transactions'] as const) {
      const chart = target.chart(id);
      await expect(chart, id).toBeVisible();
      await expect(target.chartSurface(chart), `${id} has an svg`).toBeVisible();
    }
    await expect(target.heatmap).toBeVisible();
  });

  test('queued connections and open transactions are shown', async ({ page }) => {
    const target = new TargetPage(page);

    await expect(target.queuePanel).toBeVisible();
    await expect(target.queueTable).toBeVisible();
    await expect(target.queueTable.getByRole('columnheader', { name: 'SQL' })).toBeVisible();
    // The waves load peaks every 20 s: connections queue, and who they are is visible (PROCESS granted).
    await expect(target.queueTable.getByRole('cell', { name: 'sbtest', exact: true }).first()).toBeVisible({
      timeout: 45_000,
    });

    await expect(target.transactionsPanel).toBeVisible();
    await expect(target.transactionsSummary).toContainText(/\d+ open/);
    await expect(target.transactionsTable).toBeVisible();
  });
});
