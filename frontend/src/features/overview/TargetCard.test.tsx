import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { makeTarget } from '../../test/fixtures';
import { TargetCard } from './TargetCard';

const NOW = 1700000003;

describe('TargetCard', () => {
  it('never shows up on numbers older than two poll intervals (the store fails, or nothing polls)', () => {
    render(<TargetCard target={makeTarget({ poll_interval_s: 1 })} now={NOW} />);
    const status = within(screen.getByTestId('target-card-sandbox')).getByTestId('target-status');
    expect(status.textContent).toBe('stale');
    expect(status.getAttribute('title')).toContain('the store fails');
  });

  it('shows health, server facts and summary numbers', () => {
    // Polled 2.9 s ago every 2 s: within two intervals, so up.
    render(<TargetCard target={makeTarget({ poll_interval_s: 2 })} now={NOW} />);
    const card = screen.getByTestId('target-card-sandbox');
    expect(within(card).getByTestId('target-status').textContent).toBe('up');
    expect(within(card).getByTestId('target-version').textContent).toContain('MariaDB 10.11.19');
    expect(within(card).getByTestId('target-port').textContent).toContain('extra_port');
    expect(within(card).getByTestId('summary-queue-length').textContent).toContain('3');
    expect(within(card).getByTestId('summary-qps').textContent).toContain('1.2k /s');
    expect(within(card).getByTestId('target-poll-age').textContent).toContain('2 s ago');
    expect(within(card).queryByTestId('pool-off-notice')).toBeNull();
  });

  it('explains pool off instead of showing a row of zero queue numbers', () => {
    const t = makeTarget({
      server: { ...makeTarget().server!, thread_handling: 'one-thread-per-connection', pool_enabled: false, pool_tables: [] },
      summary: { ...makeTarget().summary!, queue_length: 0, groups: 0, stalled_groups: 0 },
    });
    render(<TargetCard target={t} now={NOW} />);
    expect(screen.getByTestId('pool-off-notice').textContent).toBe(
      'Thread pool off (one-thread-per-connection): per-group data needs thread_handling=pool-of-threads, which requires a restart',
    );
    expect(screen.queryByTestId('summary-queue-length')).toBeNull();
    expect(screen.queryByTestId('summary-stalled-groups')).toBeNull();
    expect(screen.getByTestId('summary-threads').textContent).toContain('9 / 70');
  });

  it('highlights stalled groups and shows a down reason and missing privileges', () => {
    const t = makeTarget({
      status: 'down',
      reason: "connect failed: (2003) Can't connect to MySQL server on '127.0.0.1'",
      missing_privileges: ['PROCESS'],
      summary: { ...makeTarget().summary!, stalled_groups: 1 },
    });
    render(<TargetCard target={t} now={NOW} />);
    const card = screen.getByTestId('target-card-sandbox');
    expect(card.className).toContain('card-stalled');
    expect(screen.getByTestId('target-status').textContent).toBe('down');
    expect(screen.getByTestId('target-reason').textContent).toContain("Can't connect");
    expect(screen.getByTestId('target-stalled').textContent).toBe('1 stalled group');
    expect(screen.getByTestId('privilege-warning').textContent).toContain('PROCESS missing');
  });
});
