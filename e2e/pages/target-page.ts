// Page object for one target ("/targets/<name>"): header, notices, group table, charts, live tables, range picker.
import type { Locator, Page } from '@playwright/test';

export type RangeChoice = 'Live' | '5m' | '1h' | '24h';

export class TargetPage {
  constructor(readonly page: Page) {}

  async goto(name: string, query = ''): Promise<void> {
    await this.page.goto(`/targets/${encodeURIComponent(name)}${query}`);
  }

  // ------------------------------------------------------------------ header

  get heading(): Locator {
    return this.page.getByRole('heading', { level: 1 });
  }
  get header(): Locator {
    return this.page.getByTestId('target-header');
  }
  get status(): Locator {
    return this.header.getByTestId('target-status');
  }
  get version(): Locator {
    return this.header.getByTestId('target-version');
  }
  get liveStatus(): Locator {
    return this.header.getByTestId('live-status');
  }
  get pollAge(): Locator {
    return this.header.getByTestId('target-poll-age');
  }
  get breadcrumbOverview(): Locator {
    return this.page.getByRole('navigation').getByRole('link', { name: 'Overview' }).last();
  }

  // ------------------------------------------------------------------ notices

  get downNotice(): Locator {
    return this.page.getByTestId('target-down');
  }
  get downReason(): Locator {
    return this.page.getByTestId('target-down-reason');
  }
  get notFound(): Locator {
    return this.page.getByTestId('target-not-found');
  }
  get poolOffNotice(): Locator {
    return this.page.getByTestId('pool-off-notice');
  }
  get privilegeWarning(): Locator {
    return this.page.getByTestId('privilege-warning');
  }
  get stalledBanner(): Locator {
    return this.page.getByTestId('stalled-banner');
  }

  // ------------------------------------------------------------------ thread groups

  get groupsPanel(): Locator {
    return this.page.getByTestId('groups-panel');
  }
  /** The `<time>` of the poll the page shows, in the groups panel header ("poll at HH:MM:SS (n s ago)"). */
  get lastPollClock(): Locator {
    return this.groupsPanel.getByTestId('state-poll-time');
  }
  /**
   * The poll's timestamp (ISO, from `dateTime`). Only new data changes it; the "(n s ago)" beside it
   * ticks by itself, so comparing that text would not prove the page is live.
   */
  async lastPollTime(): Promise<string> {
    return (await this.lastPollClock.getAttribute('datetime')) ?? '';
  }
  /**
   * The poll's clock as shown and its moment (ISO), read in one step: read apart, a busy CPU lets a
   * newer poll (one a second) land between the two reads, so they would never agree.
   */
  async lastPollShown(): Promise<{ clock: string; iso: string }> {
    return this.lastPollClock.evaluate((t) => ({ clock: t.textContent ?? '', iso: t.getAttribute('datetime') ?? '' }));
  }
  get groupTable(): Locator {
    return this.page.getByTestId('group-table');
  }
  /** Data rows of the group table (header and total rows excluded). */
  get groupRows(): Locator {
    return this.groupTable.locator('tbody').getByRole('row');
  }
  groupRow(id: number): Locator {
    return this.page.getByTestId(`group-row-${id}`);
  }
  groupQueue(id: number): Locator {
    return this.page.getByTestId(`group-queue-${id}`);
  }
  groupVerdict(id: number): Locator {
    return this.page.getByTestId(`group-verdict-${id}`);
  }
  /** Rows whose verdict is "STALLED (…)" (the server's IS_STALLED badge alone does not count). */
  get stalledGroupRows(): Locator {
    return this.groupRows.filter({ has: this.page.getByText(/^STALLED/) });
  }
  retiredBadge(id: number): Locator {
    return this.page.getByTestId(`group-retired-${id}`);
  }

  // ------------------------------------------------------------------ threads & throughput

  get qps(): Locator {
    return this.page.getByTestId('throughput-qps').getByRole('cell');
  }
  get threadsRunning(): Locator {
    return this.page.getByTestId('threads-running').getByRole('cell');
  }

  // ------------------------------------------------------------------ history

  get historyRange(): Locator {
    return this.page.getByTestId('history-range');
  }
  chart(
    testId: 'chart-queue-length' | 'chart-queue-time' | 'chart-threads' | 'chart-throughput' | 'chart-transactions',
  ): Locator {
    return this.page.getByTestId(testId);
  }
  /** The drawn chart surface inside a chart panel. */
  chartSurface(chart: Locator): Locator {
    return chart.locator('svg').first();
  }
  /** Drag across a chart from one share of its width to another (0..1): the zoom gesture. */
  async dragAcross(chart: Locator, from: number, to: number): Promise<void> {
    await chart.scrollIntoViewIfNeeded();
    const box = await chart.locator('.chart-box').boundingBox();
    if (!box) throw new Error('the chart is not laid out');
    const y = box.y + box.height / 2;
    // The plot starts after the value axis (64 px) and ends before the right margin.
    const x = (f: number) => box.x + 64 + f * (box.width - 64 - 12);
    await this.page.mouse.move(x(from), y);
    await this.page.mouse.down();
    await this.page.mouse.move(x(to), y, { steps: 8 });
    await this.page.mouse.up();
  }
  // ------------------------------------------------------------------ who held the pool

  get heldPanel(): Locator {
    return this.page.getByTestId('held-panel');
  }
  /** The digests of "Who held the pool", in the order shown. */
  get heldRows(): Locator {
    return this.heldPanel.getByTestId('held-row');
  }
  heldSort(by: 'stalled' | 'held' | 'queued'): Locator {
    return this.heldPanel.getByTestId(`held-sort-${by}`);
  }
  get holdersStrip(): Locator {
    return this.page.getByTestId('holders-strip');
  }

  /** The alert and stall bands' handles of a chart (buttons that open the band's span). */
  bands(chartTestId: string): Locator {
    return this.page.getByTestId(`${chartTestId}-band`);
  }
  /** The time zone a chart's axis is in. */
  chartZone(chartTestId: string): Locator {
    return this.page.getByTestId(`${chartTestId}-tz`);
  }
  chartHelp(chartTestId: string): Locator {
    return this.page.getByTestId(`${chartTestId}-help`);
  }
  get nowSummary(): Locator {
    return this.page.getByTestId('now-summary');
  }
  get heatmap(): Locator {
    return this.page.getByRole('img', { name: /per thread group over time/ });
  }

  // ------------------------------------------------------------------ now

  get queuePanel(): Locator {
    return this.page.getByTestId('queue-panel');
  }
  get queueTable(): Locator {
    return this.page.getByTestId('queue-table');
  }
  get transactionsPanel(): Locator {
    return this.page.getByTestId('trx-panel');
  }
  get transactionsSummary(): Locator {
    return this.page.getByTestId('trx-summary');
  }
  get transactionsTable(): Locator {
    return this.page.getByTestId('trx-table');
  }
  get transactionRows(): Locator {
    return this.transactionsTable.locator('tbody tr[data-testid^="trx-row-"]');
  }
  get transactionsShowAll(): Locator {
    return this.page.getByTestId('trx-truncated-toggle');
  }

  // ------------------------------------------------------------------ time range

  get rangePicker(): Locator {
    return this.page.getByRole('group', { name: 'Time range' });
  }
  get earlier(): Locator {
    return this.page.getByTestId('range-earlier');
  }
  get later(): Locator {
    return this.page.getByTestId('range-later');
  }
  get zoomOut(): Locator {
    return this.page.getByTestId('range-zoom-out');
  }
  rangeButton(choice: RangeChoice | 'Custom'): Locator {
    return this.rangePicker.getByRole('button', { name: choice, exact: true });
  }
  async chooseRange(choice: RangeChoice): Promise<void> {
    await this.rangeButton(choice).click();
  }
  get customFrom(): Locator {
    return this.page.getByLabel('from');
  }
  get customTo(): Locator {
    return this.page.getByLabel('to', { exact: true });
  }
  get applyCustomRange(): Locator {
    return this.page.getByRole('button', { name: 'Apply' });
  }

  // ------------------------------------------------------------------ flavors

  get poolKind(): Locator {
    return this.header.getByTestId('target-pool-kind');
  }
  get serverNotes(): Locator {
    return this.page.getByTestId('server-notes');
  }
  /** Whole-pool panel: Percona's only pool data, a settings summary for the others. */
  get poolPanel(): Locator {
    return this.page.getByTestId('pool-panel');
  }
  get poolOffPanel(): Locator {
    return this.page.getByTestId('pool-off-panel');
  }
  get waitsPanel(): Locator {
    return this.page.getByTestId('waits-panel');
  }
  get collectorsTable(): Locator {
    return this.page.getByTestId('collectors-table');
  }
  flavorChart(
    testId: 'chart-queue-depth' | 'chart-queue-wait-window' | 'chart-stalled-ratio' | 'chart-cache-miss',
  ): Locator {
    return this.page.getByTestId(testId);
  }
  /** "Thread pool on — grant … to read it": the pool runs but the monitoring user cannot read it. */
  get grantNeeded(): Locator {
    return this.page.getByTestId('pool-grant-needed');
  }
}
