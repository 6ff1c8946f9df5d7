import { describe, expect, it } from 'vitest';
import type { PoolSummary } from '../../api/types';
import { stallLimitMs, stallLimitText } from './stallLimit';

const pool = (over: Partial<PoolSummary>): PoolSummary => ({
  kind: 'mysql_enterprise',
  size: 4,
  stall_limit_ms: null,
  stall_limit_raw: null,
  threads: null,
  idle_threads: null,
  high_prio_mode: null,
  high_prio_tickets: null,
  queue_wait: [],
  queue_depth: null,
  admin_group: null,
  thread_states: null,
  ...over,
});

describe('stall limit', () => {
  it('is shown in ms as the backend computed it (MySQL Enterprise: 6 units of 10 ms)', () => {
    const p = pool({ stall_limit_ms: 60, stall_limit_raw: '6 ×10 ms' });
    expect(stallLimitMs(p)).toBe(60);
    expect(stallLimitText(p)).toBe('60 ms');
  });

  it('falls back to the raw value with its unit, never the raw number as ms', () => {
    const p = pool({ stall_limit_raw: '6 ×10 ms' });
    expect(stallLimitMs(p)).toBeNull();
    expect(stallLimitText(p)).toBe('6 ×10 ms');
    expect(stallLimitText(null)).toBeNull();
  });
});
