// Number, duration and time formatting shared by tables, cards and chart axes. `null` always renders as an em dash.
// Times are shown in the viewer's chosen zone (lib/prefs.ts).
import { getPrefs, type TimeZoneChoice } from './prefs';

export const DASH = '—';

type Num = number | null | undefined;

function isNum(v: Num): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** Plain count or measurement: integers as-is, fractions to `digits` places (trailing zeros dropped). */
export function fmtNum(v: Num, digits = 1): string {
  if (!isNum(v)) return DASH;
  if (Number.isInteger(v)) return intFmt.format(v);
  return new Intl.NumberFormat('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 }).format(v);
}

/** Compact for axes and tight cells: 1234 → 1.2k, 2500000 → 2.5M. */
export function fmtCompact(v: Num): string {
  if (!isNum(v)) return DASH;
  const a = Math.abs(v);
  if (a >= 1e9) return `${trim(v / 1e9)}G`;
  if (a >= 1e6) return `${trim(v / 1e6)}M`;
  if (a >= 1e3) return `${trim(v / 1e3)}k`;
  return fmtNum(v, a < 10 ? 2 : 1);
}

function trim(v: number): string {
  return v.toFixed(1).replace(/\.0$/, '');
}

/** Per-second rate with unit. */
export function fmtRate(v: Num): string {
  if (!isNum(v)) return DASH;
  return `${fmtNum(v, Math.abs(v) < 10 ? 2 : 1)} /s`;
}

/** Per-second rate, compacted for small tiles: 12.8k /s. */
export function fmtRateCompact(v: Num): string {
  if (!isNum(v)) return DASH;
  return `${fmtCompact(v)} /s`;
}

/** Milliseconds, switching to seconds/minutes when large. */
export function fmtMs(v: Num): string {
  if (!isNum(v)) return DASH;
  if (v === 0) return '0 ms';
  if (Math.abs(v) < 1) return `${v.toFixed(2)} ms`;
  if (Math.abs(v) < 1000) return `${fmtNum(v, v < 100 ? 1 : 0)} ms`;
  return fmtSeconds(v / 1000);
}

/** A duration in seconds: 0.35 s, 12.4 s, 3 m 05 s, 2 h 07 m, 3 d 4 h. */
export function fmtSeconds(v: Num): string {
  if (!isNum(v)) return DASH;
  const neg = v < 0;
  const s = Math.abs(v);
  if (s === 0) return '0 s';
  let out: string;
  if (s < 60) out = `${Number.isInteger(s) || s >= 10 ? s.toFixed(0) : s.toFixed(s < 1 ? 2 : 1)} s`;
  else if (s < 3600)
    out = s % 60 === 0 ? `${s / 60} m` : `${Math.floor(s / 60)} m ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  else if (s < 86400) out = `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} m`;
  else out = `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  return neg ? `-${out}` : out;
}

/** A duration the server keeps to the second (a transaction's age, its lock wait): whole seconds, never more precise. */
export function fmtWholeSeconds(v: Num): string {
  if (!isNum(v)) return DASH;
  return v < 1 ? '< 1 s' : fmtSeconds(Math.floor(v));
}

/** A 0..1 ratio as a percentage. */
export function fmtPercent(ratio: Num, digits = 2): string {
  if (!isNum(ratio)) return DASH;
  return `${(ratio * 100).toFixed(digits)} %`;
}

/** Age of an epoch timestamp relative to `now` (both seconds): "3 s ago". */
export function fmtAgo(ts: Num, now: number): string {
  if (!isNum(ts)) return 'never';
  const d = now - ts;
  if (d < 1) return 'just now';
  return `${fmtSeconds(Math.floor(d))} ago`;
}

const p2 = (n: number) => String(n).padStart(2, '0');

interface WallClock {
  Y: number;
  M: number;
  D: number;
  h: number;
  m: number;
  s: number;
}

/** The wall clock of an epoch in the viewer's chosen zone (lib/prefs.ts: the browser's, or UTC). */
export function wallClock(ts: number, tz: TimeZoneChoice = getPrefs().tz): WallClock {
  const d = new Date(ts * 1000);
  return tz === 'utc'
    ? {
        Y: d.getUTCFullYear(),
        M: d.getUTCMonth() + 1,
        D: d.getUTCDate(),
        h: d.getUTCHours(),
        m: d.getUTCMinutes(),
        s: d.getUTCSeconds(),
      }
    : { Y: d.getFullYear(), M: d.getMonth() + 1, D: d.getDate(), h: d.getHours(), m: d.getMinutes(), s: d.getSeconds() };
}

/**
 * The zone times are shown in, as axes and tooltips name it: "UTC", or the browser's own short name
 * at that moment ("CET", "GMT+2"; it changes with daylight saving).
 */
export function tzName(ts: number = Date.now() / 1000, tz: TimeZoneChoice = getPrefs().tz): string {
  if (tz === 'utc') return 'UTC';
  const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
    .formatToParts(new Date(ts * 1000))
    .find((x) => x.type === 'timeZoneName');
  return part?.value ?? 'local time';
}

/** Wall-clock HH:MM:SS in the chosen zone. */
export function fmtClock(ts: Num): string {
  if (!isNum(ts)) return DASH;
  const c = wallClock(ts);
  return `${p2(c.h)}:${p2(c.m)}:${p2(c.s)}`;
}

/** Date + time in the chosen zone, e.g. 2024-05-01 13:04:05. */
export function fmtDateTime(ts: Num): string {
  if (!isNum(ts)) return DASH;
  const c = wallClock(ts);
  return `${c.Y}-${p2(c.M)}-${p2(c.D)} ${p2(c.h)}:${p2(c.m)}:${p2(c.s)}`;
}

/** Date + time with the zone's name, for tooltips and anything read on its own: 2024-05-01 13:04:05 UTC. */
export function fmtDateTimeZone(ts: Num): string {
  return isNum(ts) ? `${fmtDateTime(ts)} ${tzName(ts)}` : DASH;
}

/** Axis tick label whose precision follows the visible span. */
export function fmtAxisTime(ts: number, spanS: number): string {
  const c = wallClock(ts);
  if (spanS <= 15 * 60) return `${p2(c.h)}:${p2(c.m)}:${p2(c.s)}`;
  if (spanS <= 2 * 86400) return `${p2(c.h)}:${p2(c.m)}`;
  return `${p2(c.M)}-${p2(c.D)} ${p2(c.h)}:${p2(c.m)}`;
}

/** An epoch as the value of an <input type="datetime-local"> (minute precision), in the chosen zone. */
export function toDatetimeLocal(epoch: number): string {
  const c = wallClock(epoch);
  return `${c.Y}-${p2(c.M)}-${p2(c.D)}T${p2(c.h)}:${p2(c.m)}`;
}

/** A datetime-local value, read in the chosen zone, as epoch seconds; null when empty or invalid. */
export function fromDatetimeLocal(value: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return null;
  const [Y, M, D, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0));
  const ms = getPrefs().tz === 'utc' ? Date.UTC(Y, M - 1, D, h, mi, s) : new Date(Y, M - 1, D, h, mi, s).getTime();
  return Number.isFinite(ms) ? ms / 1000 : null;
}

/** A count with its noun, singular or plural: "1 target", "3 targets", "0 alerts". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${intFmt.format(n)} ${n === 1 ? one : many}`;
}

/** Cut a long string (SQL) to `max` chars with an ellipsis; collapses whitespace runs. */
export function truncate(s: string | null | undefined, max: number): string {
  if (!s) return '';
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

export function flavorLabel(flavor: string | null | undefined): string {
  switch (flavor) {
    case 'mariadb':
      return 'MariaDB';
    case 'mysql':
      return 'MySQL';
    case 'percona':
      return 'Percona Server';
    case 'alisql':
      return 'AliSQL';
    default:
      return 'Unknown flavor';
  }
}
