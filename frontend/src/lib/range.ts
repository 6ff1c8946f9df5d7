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

/** The narrowest range a zoom makes: below a few polls a chart has nothing to draw. */
export const MIN_ZOOM_S = 10;

/** A fixed range over [from, to] (whole seconds, as the URL keeps it), at least MIN_ZOOM_S wide. */
export function fixedRange(from: number, to: number): TimeRange {
  const lo = Math.floor(Math.min(from, to));
  const hi = Math.max(Math.ceil(Math.max(from, to)), lo + MIN_ZOOM_S);
  return { kind: 'custom', from: lo, to: hi };
}

/** Keep [from, to] out of the future, keeping its width. */
function notAfter(from: number, to: number, now: number): [number, number] {
  return to > now ? [from - (to - now), now] : [from, to];
}

/** The range moved by half its width (-1: earlier, +1: later), never past now; it becomes a fixed range. */
export function shiftRange(range: TimeRange, dir: -1 | 1, now: number): TimeRange {
  const { from, to } = resolveRange(range, now);
  // Whole seconds, so a step back and a step forward land where they started.
  const step = Math.floor((to - from) / 2) * dir;
  return fixedRange(...notAfter(from + step, to + step, now));
}

/** The range twice as wide around its middle, never past now. */
export function zoomOut(range: TimeRange, now: number): TimeRange {
  const { from, to } = resolveRange(range, now);
  const half = to - from;
  const mid = (from + to) / 2;
  return fixedRange(...notAfter(mid - half, mid + half, now));
}

/** Whether a later range exists to shift to (a live or relative range already ends now). */
export function canShiftLater(range: TimeRange, now: number): boolean {
  return range.kind === 'custom' && range.to < now - 1;
}
