import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { QueuedConnection } from '../../api/types';
import { QUEUE_ROW_LIMIT, QueueTable } from './StateTables';

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
  ...over,
});

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

  it('caps the rows it renders and says how many the backend left out', () => {
    const queue = Array.from({ length: QUEUE_ROW_LIMIT + 5 }, (_, i) => qc({ connection_id: i + 1, position: i }));
    render(<QueueTable queue={queue} coarse processMissing total={900} />);
    expect(screen.getAllByTestId(/^queue-row-/)).toHaveLength(QUEUE_ROW_LIMIT);
    expect(screen.getByTestId('queue-backend-truncated').textContent).toContain('900 connections are queued');
    fireEvent.click(within(screen.getByTestId('queue-truncated')).getByRole('button', { name: 'show all' }));
    expect(screen.getAllByTestId(/^queue-row-/)).toHaveLength(QUEUE_ROW_LIMIT + 5);
    expect(screen.getByRole('columnheader', { name: /waiting \(coarse\)/ })).toBeTruthy();
  });
});
