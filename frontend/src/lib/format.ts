// Number, duration and time formatting shared by tables, cards and chart axes. `null` always renders as an em dash.

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

/** Local wall-clock HH:MM:SS. */
export function fmtClock(ts: Num): string {
  if (!isNum(ts)) return DASH;
  const d = new Date(ts * 1000);
  return `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
}

/** Local date + time, e.g. 2024-05-01 13:04:05. */
export function fmtDateTime(ts: Num): string {
  if (!isNum(ts)) return DASH;
  const d = new Date(ts * 1000);
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${fmtClock(ts)}`;
}

/** Axis tick label whose precision follows the visible span. */
export function fmtAxisTime(ts: number, spanS: number): string {
  const d = new Date(ts * 1000);
  if (spanS <= 15 * 60) return fmtClock(ts);
  if (spanS <= 2 * 86400) return `${p2(d.getHours())}:${p2(d.getMinutes())}`;
  return `${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}`;
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
