import { describe, expect, it } from 'vitest';
import { makePool } from '../../test/fixtures';
import { stallLimitMs, stallLimitText } from './stallLimit';

describe('stall limit', () => {
  it('is shown in ms as the backend computed it (MySQL Enterprise: 6 units of 10 ms)', () => {
    const p = makePool({ stall_limit_ms: 60, stall_limit_raw: '6 ×10 ms' });
    expect(stallLimitMs(p)).toBe(60);
    expect(stallLimitText(p)).toBe('60 ms');
  });

  it('falls back to the raw value with its unit, never the raw number as ms', () => {
    const p = makePool({ stall_limit_raw: '6 ×10 ms' });
    expect(stallLimitMs(p)).toBeNull();
    expect(stallLimitText(p)).toBe('6 ×10 ms');
    expect(stallLimitText(null)).toBeNull();
  });
});
