import { describe, expect, it, vi } from 'vitest';
import {
  DASH,
  fmtAgo,
  fmtAxisTime,
  fmtClock,
  fmtCompact,
  fmtDateTimeZone,
  fmtMs,
  fmtNum,
  fmtPercent,
  fmtRate,
  fmtSeconds,
  fromDatetimeLocal,
  toDatetimeLocal,
  truncate,
  tzName,
} from './format';
import { setPrefs } from './prefs';

describe('format helpers', () => {
  it('renders null/undefined/NaN as a dash', () => {
    for (const f of [fmtNum, fmtRate, fmtMs, fmtSeconds, fmtPercent, fmtCompact]) {
      expect(f(null)).toBe(DASH);
      expect(f(undefined)).toBe(DASH);
      expect(f(Number.NaN)).toBe(DASH);
    }
  });

  it('formats counts with separators and limited decimals', () => {
    expect(fmtNum(1234567)).toBe('1,234,567');
    expect(fmtNum(1234.56)).toBe('1,234.6');
    expect(fmtNum(0)).toBe('0');
  });

  it('formats rates with a unit', () => {
    expect(fmtRate(812)).toBe('812 /s');
    expect(fmtRate(0.5)).toBe('0.5 /s');
    expect(fmtRate(1234.5)).toBe('1,234.5 /s');
  });

  it('formats milliseconds and switches to seconds', () => {
    expect(fmtMs(0)).toBe('0 ms');
    expect(fmtMs(0.25)).toBe('0.25 ms');
    expect(fmtMs(12.5)).toBe('12.5 ms');
    expect(fmtMs(299.4)).toBe('299 ms');
    expect(fmtMs(8700)).toBe('8.7 s');
  });

  it('formats durations in seconds', () => {
    expect(fmtSeconds(0)).toBe('0 s');
    expect(fmtSeconds(0.35)).toBe('0.35 s');
    expect(fmtSeconds(60)).toBe('1 m');
    expect(fmtSeconds(12.4)).toBe('12 s');
    expect(fmtSeconds(185)).toBe('3 m 05 s');
    expect(fmtSeconds(7620)).toBe('2 h 07 m');
    expect(fmtSeconds(90000)).toBe('1 d 1 h');
  });

  it('formats ratios as percentages', () => {
    expect(fmtPercent(0.02)).toBe('2.00 %');
    expect(fmtPercent(0.001, 1)).toBe('0.1 %');
  });

  it('compacts large numbers', () => {
    expect(fmtCompact(52000)).toBe('52k');
    expect(fmtCompact(2_500_000)).toBe('2.5M');
    expect(fmtCompact(3)).toBe('3');
  });

  it('describes poll age', () => {
    expect(fmtAgo(100, 100.4)).toBe('just now');
    expect(fmtAgo(100, 103.9)).toBe('3 s ago');
    expect(fmtAgo(null, 100)).toBe('never');
    expect(fmtAgo(0, 125)).toBe('2 m 05 s ago');
  });

  it('truncates SQL on one line with an ellipsis', () => {
    expect(truncate('SELECT\n  1', 80)).toBe('SELECT 1');
    expect(truncate('abcdefghij', 5)).toBe('abcd…');
    expect(truncate(null, 5)).toBe('');
  });

  it('shows times in UTC when chosen, and names the zone', () => {
    const t = 1_700_000_040; // 2023-11-14 22:14:00 UTC
    vi.stubEnv('TZ', 'Asia/Kolkata'); // +05:30 all year: local and UTC differ
    setPrefs({ tz: 'utc' });
    expect(fmtClock(t)).toBe('22:14:00');
    expect(fmtDateTimeZone(t)).toBe('2023-11-14 22:14:00 UTC');
    expect(fmtAxisTime(t, 3600)).toBe('22:14');
    expect(toDatetimeLocal(t)).toBe('2023-11-14T22:14');
    expect(fromDatetimeLocal('2023-11-14T22:14')).toBe(t);
    setPrefs({ tz: 'local' });
    expect(fmtClock(t)).toBe('03:44:00');
    expect(tzName(t)).toBe('GMT+5:30');
    expect(fromDatetimeLocal('2023-11-15T03:44')).toBe(t);
    vi.unstubAllEnvs();
  });

  it('reads no datetime-local value out of empty or invalid input', () => {
    expect(fromDatetimeLocal('')).toBeNull();
    expect(fromDatetimeLocal('not a date')).toBeNull();
  });
});
