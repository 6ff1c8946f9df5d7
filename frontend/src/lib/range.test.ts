import { describe, expect, it } from 'vitest';
import { canShiftLater, fixedRange, parseRange, resolveRange, sameRange, serializeRange, shiftRange, zoomOut } from './range';

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

describe('moving the range', () => {
  const now = 1_700_000_000;
  it('shifts by half the width, and never past now', () => {
    expect(shiftRange({ kind: 'custom', from: now - 4000, to: now - 2000 }, -1, now)).toEqual(fixedRange(now - 5000, now - 3000));
    expect(shiftRange({ kind: 'custom', from: now - 4000, to: now - 2000 }, 1, now)).toEqual(fixedRange(now - 3000, now - 1000));
    expect(shiftRange({ kind: 'custom', from: now - 2000, to: now - 500 }, 1, now)).toEqual(fixedRange(now - 1500, now));
    // A live or relative range ends now: earlier is fixed, later is not there.
    expect(shiftRange({ kind: 'live' }, -1, now)).toEqual(fixedRange(now - 450, now - 150));
    expect(canShiftLater({ kind: 'relative', key: '1h' }, now)).toBe(false);
    expect(canShiftLater({ kind: 'custom', from: now - 600, to: now - 300 }, now)).toBe(true);
  });
  it('zooms out around the middle, and never past now', () => {
    expect(zoomOut({ kind: 'custom', from: now - 4000, to: now - 3000 }, now)).toEqual(fixedRange(now - 4500, now - 2500));
    expect(zoomOut({ kind: 'relative', key: '1h' }, now)).toEqual(fixedRange(now - 7200, now));
  });
  it('keeps a zoom at least 10 s wide and in whole seconds', () => {
    expect(fixedRange(100.4, 101.2)).toEqual({ kind: 'custom', from: 100, to: 110 });
    expect(fixedRange(200.9, 100.2)).toEqual({ kind: 'custom', from: 100, to: 201 });
  });
});
