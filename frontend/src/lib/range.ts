// Time range kept in the URL query: ?range=live|5m|1h|24h or ?from=<epoch>&to=<epoch>.

export type RelativeKey = '5m' | '1h' | '24h';

export type TimeRange = { kind: 'live' } | { kind: 'relative'; key: RelativeKey } | { kind: 'custom'; from: number; to: number };

/** Live mode shows this much history and trims anything older. */
export const LIVE_WINDOW_S = 300;

export const RELATIVE_SECONDS: Record<RelativeKey, number> = {
  '5m': 300,
  '1h': 3600,
  '24h': 86400,
};

export const LIVE: TimeRange = { kind: 'live' };

function parseEpoch(v: string | null): number | null {
  if (v === null || v.trim() === '') return null;
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** Parse a location.search string (with or without '?'). Anything invalid falls back to live. */
export function parseRange(search: string): TimeRange {
  const q = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const from = parseEpoch(q.get('from'));
  const to = parseEpoch(q.get('to'));
  if (from !== null && to !== null && from < to) return { kind: 'custom', from, to };
  const r = q.get('range');
  if (r === '5m' || r === '1h' || r === '24h') return { kind: 'relative', key: r };
  return LIVE;
}

/** Write the range into a query string, keeping unrelated params; always explicit so shared links are unambiguous. */
export function serializeRange(range: TimeRange, base = ''): string {
  const q = new URLSearchParams(base.startsWith('?') ? base.slice(1) : base);
  q.delete('range');
  q.delete('from');
  q.delete('to');
  if (range.kind === 'live') q.set('range', 'live');
  else if (range.kind === 'relative') q.set('range', range.key);
  else {
    q.set('from', String(Math.floor(range.from)));
    q.set('to', String(Math.floor(range.to)));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Concrete [from, to] in epoch seconds for a range evaluated at `now`. */
export function resolveRange(range: TimeRange, now: number): { from: number; to: number } {
  switch (range.kind) {
    case 'live':
      return { from: now - LIVE_WINDOW_S, to: now };
    case 'relative':
      return { from: now - RELATIVE_SECONDS[range.key], to: now };
    case 'custom':
      return { from: range.from, to: range.to };
  }
}

export function rangeLabel(range: TimeRange): string {
  switch (range.kind) {
    case 'live':
      return 'Live (last 5 min)';
    case 'relative':
      return `Last ${range.key}`;
    case 'custom':
      return 'Custom';
  }
}

export function sameRange(a: TimeRange, b: TimeRange): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'relative' && b.kind === 'relative') return a.key === b.key;
  if (a.kind === 'custom' && b.kind === 'custom') return a.from === b.from && a.to === b.to;
  return true;
}

/** Format an epoch as the local value a <input type="datetime-local"> expects (minute precision). */
const p = (n: number) => String(n).padStart(2, '0');

export function toDatetimeLocal(epoch: number): string {
  const d = new Date(epoch * 1000);
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Parse a datetime-local value (local time) to epoch seconds; null when empty/invalid. */
export function fromDatetimeLocal(value: string): number | null {
  if (!value) return null;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms / 1000 : null;
}
