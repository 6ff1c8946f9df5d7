import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../api/metrics.gen';
import type { QueuedConnection, TransactionItem } from '../../api/types';
import { CAPPED_ROWS } from '../../ui/tables';
import { QueueTable, TransactionsTable } from './StateTables';

const qc = (over: Partial<QueuedConnection>): QueuedConnection => ({
  group_id: 0,
  position: 0,
  priority: 'low',
  connection_id: 1,
  queueing_time_ms: 1,
  user: 'sbtest',
  host: '127.0.0.1:1',
  db: 'sbtest',
  command: 'Sleep',
  time_s: 0,
  state: '',
  info: null,
  last_sql: null,
  last_sql_seen_s_ago: null,
  ...over,
});

const precedes = (a: Element, b: Element) => Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
const queueRows = () => screen.getAllByTestId(/^queue-row-/);
const headers = () => screen.getAllByRole('columnheader').map((h) => h.textContent?.replace(/\?/g, '').trim());

describe('QueueTable', () => {
  it('lists longest waiters first and labels the last seen SQL of a sleeping queued connection', () => {
    render(
      <QueueTable
        queue={[
          qc({ connection_id: 7, queueing_time_ms: 5, last_sql: 'SELECT 1', last_sql_seen_s_ago: 2 }),
          qc({ connection_id: 8, queueing_time_ms: 1200, priority: 'high', command: 'Query', info: 'UPDATE t SET a=1' }),
        ]}
        coarse={false}
        processMissing={false}
      />,
    );
    const rows = within(screen.getByTestId('queue-table')).getAllByTestId(/^queue-row-/);
    expect(rows.map((r) => r.getAttribute('data-testid'))).toEqual(['queue-row-8', 'queue-row-7']);
    expect(rows[0].textContent).toContain('HIGH');
    expect(rows[0].textContent).toContain('1.2 s');
    expect(rows[0].textContent).toContain('UPDATE t SET a=1');
    expect(rows[1].textContent).toContain('last seen 2 s ago:');
    expect(rows[1].textContent).toContain('SELECT 1');
  });

  it('shows the 10 longest waiters, all on asking, and says how many the backend left out', () => {
    const queue = Array.from({ length: 47 }, (_, i) => qc({ connection_id: i + 1, position: i, queueing_time_ms: i }));
    render(<QueueTable queue={queue} coarse processMissing total={900} />);
    expect(queueRows()).toHaveLength(CAPPED_ROWS);
    expect(queueRows()[0].getAttribute('data-testid')).toBe('queue-row-47');
    expect(screen.getByTestId('queue-backend-truncated').textContent).toContain('900 connections are queued');
    fireEvent.click(within(screen.getByTestId('queue-truncated')).getByRole('button', { name: 'show all (47)' }));
    expect(queueRows()).toHaveLength(47);
    fireEvent.click(screen.getByTestId('queue-truncated-toggle'));
    expect(queueRows()).toHaveLength(CAPPED_ROWS);
    // Above the rows, so live rows re-rendering do not move it under the pointer.
    expect(precedes(screen.getByTestId('queue-truncated-toggle'), screen.getByTestId('queue-table'))).toBe(true);
    expect(screen.getByRole('columnheader', { name: /waiting \(coarse\)/ })).toBeTruthy();
  });

  it("explains the waiting column from the catalog's queue-wait series, with the mode's caveat", () => {
    render(<QueueTable queue={[qc({})]} coarse processMissing={false} />);
    fireEvent.click(screen.getByTestId('queue-waiting-help'));
    const text = screen.getByTestId('queue-waiting-help-text').textContent;
    expect(text).toContain(METRICS.tp_queue_wait_max_ms.help);
    expect(text).toContain(METRICS.tp_queue_wait_avg_ms.help);
    expect(text).toContain('coarse mode');
  });

  it('leaves out the command and time columns unless a queued session is active', () => {
    const { rerender } = render(
      <QueueTable queue={[qc({ command: null, time_s: null })]} coarse={false} processMissing={false} />,
    );
    expect(headers()).not.toContain('command');
    expect(headers()).not.toContain('time');
    rerender(<QueueTable queue={[qc({ command: 'Query', time_s: 3 })]} coarse={false} processMissing={false} />);
    expect(headers()).toContain('command');
    expect(screen.getByTestId('queue-row-1').textContent).toContain('Query');
  });
});

const trx = (thread: number, trxId = '0'): TransactionItem => ({
  trx_id: trxId,
  state: 'RUNNING',
  started_at: 1_700_000_000,
  age_s: 0.5,
  wait_s: null,
  thread_id: thread,
  user: 'sbtest',
  host: '127.0.0.1:1',
  db: 'sbtest',
  query: null,
  rows_locked: 0,
  rows_modified: 0,
});

describe('TransactionsTable', () => {
  it('puts lock waits first, then the oldest; marks read-only ones; ages in whole seconds', () => {
    render(
      <TransactionsTable
        items={[
          { ...trx(1, '0'), age_s: 1.3 },
          { ...trx(2, '4711'), age_s: 61.9, rows_modified: 3 },
          { ...trx(3, '4712'), age_s: 5.2, state: 'LOCK WAIT', wait_s: 4.7 },
          { ...trx(4, '421587654321234'), age_s: 0.4 },
        ]}
      />,
    );
    const rows = screen.getAllByTestId(/^trx-row-/);
    expect(rows.map((r) => r.getAttribute('data-testid'))).toEqual([
      'trx-row-4712',
      'trx-row-4711',
      'trx-row-0',
      'trx-row-421587654321234',
    ]);
    expect(rows[0].textContent).toContain('5 s');
    expect(rows[0].textContent).toContain('4 s');
    expect(rows[1].textContent).toContain('1 m 01 s');
    expect(rows[2].textContent).toContain('read-only');
    expect(rows[2].textContent).toContain('1 s');
    expect(rows[2].textContent).not.toContain('1.3');
    expect(rows[3].textContent).toContain('read-only');
    expect(rows[3].textContent).toContain('< 1 s');
  });

  it('keeps one row per transaction across live updates when read-only ones all have trx_id 0', () => {
    // Live polls replace the list every second. Read-write transactions have real ids, read-only
    // ones all read 0: keyed by trx_id, React's keyed reconciliation left stale rows every poll.
    const polls: [number, string][][] = [
      [
        [1, '100'],
        [2, '0'],
        [3, '0'],
      ],
      [
        [4, '0'],
        [5, '0'],
        [6, '200'],
      ],
      [
        [7, '300'],
        [2, '0'],
        [8, '0'],
        [9, '0'],
      ],
      [[10, '0']],
      [
        [11, '400'],
        [12, '0'],
        [13, '0'],
        [14, '0'],
        [15, '0'],
      ],
      [
        [16, '0'],
        [17, '500'],
      ],
    ];
    const { rerender } = render(<TransactionsTable items={polls[0].map(([t, id]) => trx(t, id))} />);
    for (const threads of polls.slice(1)) {
      rerender(<TransactionsTable items={threads.map(([t, id]) => trx(t, id))} />);
      const body = screen.getByTestId('trx-table').querySelector('tbody')!;
      expect(body.querySelectorAll('tr')).toHaveLength(threads.length);
    }
  });

  it("explains the state column from the catalog's lock-wait series", () => {
    render(<TransactionsTable items={[trx(1, '4711')]} />);
    fireEvent.click(screen.getByTestId('trx-state-help'));
    const text = screen.getByTestId('trx-state-help-text').textContent;
    expect(text).toContain(METRICS.trx_lock_waits.help);
    expect(text).toContain('LOCK WAIT');
  });

  it('puts its show-all toggle above the rows, where growing rows do not move it', () => {
    const items = Array.from({ length: 12 }, (_, i) => ({ ...trx(i + 1, String(4700 + i)), age_s: i }));
    render(<TransactionsTable items={items} />);
    const toggle = screen.getByTestId('trx-truncated-toggle');
    expect(precedes(toggle, screen.getByTestId('trx-table'))).toBe(true);
    fireEvent.click(toggle);
    expect(screen.getAllByTestId(/^trx-row-/)).toHaveLength(12);
    expect(precedes(screen.getByTestId('trx-truncated-toggle'), screen.getByTestId('trx-table'))).toBe(true);
  });

  it('says which transactions the backend lists when it filters them by age', () => {
    const { rerender } = render(<TransactionsTable items={[]} minAgeS={1} />);
    expect(screen.getByTestId('trx-empty').textContent).toContain('No transaction open for 1 s or more, or waiting for a lock.');
    expect(screen.getByTestId('trx-listed-note').textContent).toContain('open 1 s or more, or waiting for a lock');
    rerender(<TransactionsTable items={[]} />);
    expect(screen.getByTestId('trx-empty').textContent).toContain('No open InnoDB transactions.');
    expect(screen.queryByTestId('trx-listed-note')).toBeNull();
  });
});
