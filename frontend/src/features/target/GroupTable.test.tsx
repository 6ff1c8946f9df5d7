import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { makeGroup } from '../../test/fixtures';
import { GroupTable } from './GroupTable';

describe('GroupTable', () => {
  it('labels a stalled group with its reason and marks the row', () => {
    render(
      <GroupTable
        groups={[
          makeGroup({ group_id: 0, queue_length: 0, oldest_queued_ms: null }),
          makeGroup({ group_id: 1, queue_length: 17, stalled: true, stall_reason: 'no_dequeue', oldest_queued_ms: 8200 }),
          makeGroup({ group_id: 2, stalled: true, stall_reason: 'stalls_counter', stalls_per_s: 4 }),
        ]}
        stallLimitMs={500}
      />,
    );
    const row1 = screen.getByTestId('group-row-1');
    expect(row1.className).toContain('row-stalled');
    expect(row1.getAttribute('data-stalled')).toBe('true');
    expect(within(row1).getByText('STALLED (no dequeue for > stall limit)')).toBeTruthy();
    expect(screen.getByTestId('group-queue-1').textContent).toBe('17');
    expect(within(row1).getByText('8.2 s')).toBeTruthy();

    const row2 = screen.getByTestId('group-row-2');
    expect(within(row2).getByText('STALLED (stall counter rose)')).toBeTruthy();

    const row0 = screen.getByTestId('group-row-0');
    expect(row0.className).not.toContain('row-stalled');
    expect(within(row0).queryByText(/STALLED/)).toBeNull();
    expect(screen.getByTestId('group-verdict-0').textContent).toBe('ok');
  });

  it('orders groups by id, marks retired groups and totals the queue', () => {
    render(
      <GroupTable
        groups={[makeGroup({ group_id: 3, retired: true, queue_length: 1 }), makeGroup({ group_id: 0, queue_length: 4 })]}
      />,
    );
    const rows = screen.getAllByTestId(/^group-row-/);
    expect(rows.map((r) => r.getAttribute('data-testid'))).toEqual(['group-row-0', 'group-row-3']);
    expect(screen.getByTestId('group-retired-3').textContent).toBe('retired');
    expect(screen.queryByTestId('group-retired-0')).toBeNull();
    expect(screen.getByTestId('group-queue-total').textContent).toBe('5');
  });

  it('shows a dash, not zero, for values a collector failed to read', () => {
    // The contract types queue_length as a number; the table still guards against a missing one.
    const unread = { ...makeGroup({ group_id: 0 }), queue_length: null as unknown as number };
    render(<GroupTable groups={[unread]} />);
    expect(screen.getByTestId('group-queue-0').textContent).toBe('—');
  });
});
