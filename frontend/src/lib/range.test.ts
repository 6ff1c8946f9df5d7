import { describe, expect, it } from 'vitest';
import { fromDatetimeLocal, parseRange, resolveRange, sameRange, serializeRange, toDatetimeLocal } from './range';

describe('parseRange', () => {
  it('defaults to live for an empty query', () => {
    expect(parseRange('')).toEqual({ kind: 'live' });
    expect(parseRange('?')).toEqual({ kind: 'live' });
  });

  it('reads the relative keys', () => {
    expect(parseRange('?range=5m')).toEqual({ kind: 'relative', key: '5m' });
    expect(parseRange('range=1h')).toEqual({ kind: 'relative', key: '1h' });
    expect(parseRange('?range=24h&x=1')).toEqual({ kind: 'relative', key: '24h' });
    expect(parseRange('?range=live')).toEqual({ kind: 'live' });
  });

  it('falls back to live for unknown range values', () => {
    expect(parseRange('?range=7d')).toEqual({ kind: 'live' });
    expect(parseRange('?range=')).toEqual({ kind: 'live' });
  });

  it('reads a custom from/to window, which wins over range=', () => {
    expect(parseRange('?from=1700000000&to=1700003600')).toEqual({ kind: 'custom', from: 1700000000, to: 1700003600 });
    expect(parseRange('?range=5m&from=1700000000&to=1700003600').kind).toBe('custom');
  });

  it('rejects inverted, partial or non-numeric custom windows', () => {
    expect(parseRange('?from=1700003600&to=1700000000')).toEqual({ kind: 'live' });
    expect(parseRange('?from=1700000000')).toEqual({ kind: 'live' });
    expect(parseRange('?from=abc&to=1700000000&range=1h')).toEqual({ kind: 'relative', key: '1h' });
    expect(parseRange('?from=-5&to=10')).toEqual({ kind: 'live' });
  });
});

describe('serializeRange', () => {
  it('writes each kind explicitly', () => {
    expect(serializeRange({ kind: 'live' })).toBe('?range=live');
    expect(serializeRange({ kind: 'relative', key: '1h' })).toBe('?range=1h');
    expect(serializeRange({ kind: 'custom', from: 1700000000.7, to: 1700003600.2 })).toBe('?from=1700000000&to=1700003600');
  });

  it('replaces range params but keeps unrelated ones', () => {
    expect(serializeRange({ kind: 'relative', key: '5m' }, '?from=1&to=2&foo=bar')).toBe('?foo=bar&range=5m');
    expect(serializeRange({ kind: 'custom', from: 10, to: 20 }, '?range=1h')).toBe('?from=10&to=20');
  });

  it('round-trips through parseRange', () => {
    for (const r of [
      { kind: 'live' } as const,
      { kind: 'relative', key: '24h' } as const,
      { kind: 'custom', from: 1700000000, to: 1700000300 } as const,
    ]) {
      expect(sameRange(parseRange(serializeRange(r)), r)).toBe(true);
    }
  });
});

describe('resolveRange', () => {
  const now = 1_700_000_000;
  it('gives the live window as the last 5 minutes', () => {
    expect(resolveRange({ kind: 'live' }, now)).toEqual({ from: now - 300, to: now });
  });
  it('gives relative windows ending now', () => {
    expect(resolveRange({ kind: 'relative', key: '1h' }, now)).toEqual({ from: now - 3600, to: now });
    expect(resolveRange({ kind: 'relative', key: '24h' }, now)).toEqual({ from: now - 86400, to: now });
  });
  it('passes custom windows through unchanged', () => {
    expect(resolveRange({ kind: 'custom', from: 5, to: 9 }, now)).toEqual({ from: 5, to: 9 });
  });
});

describe('datetime-local conversion', () => {
  it('round-trips at minute precision in local time', () => {
    const t = 1_700_000_040; // a whole minute
    expect(fromDatetimeLocal(toDatetimeLocal(t))).toBe(t);
    expect(toDatetimeLocal(t)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
  });
  it('returns null for empty or invalid input', () => {
    expect(fromDatetimeLocal('')).toBeNull();
    expect(fromDatetimeLocal('not a date')).toBeNull();
  });
});
