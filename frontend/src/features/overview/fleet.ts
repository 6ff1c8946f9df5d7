// The fleet table's query (sort, filter, search) as URL search params, and the ordering it implies.
import type { OverviewRow } from '../../api/types';

export const SORT_KEYS = [
  'worst',
  'name',
  'status',
  'stalled',
  'queue',
  'wait',
  'queued',
  'threads',
  'qps',
  'alerts',
  'polled',
] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export const STATUS_FILTERS = ['all', 'stalled', 'down', 'up', 'starting', 'alerting'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

export interface FleetQuery {
  sort: SortKey;
  /** Descending (the default for numbers: biggest first); names and status sort ascending by default. */
  desc: boolean;
  status: StatusFilter;
  /** `name:value` tag filters; a row must carry every one. */
  tags: string[];
  /** Matches a name or a tag value (or `name:value`), case-insensitive. */
  q: string;
}

export const DEFAULT_QUERY: FleetQuery = { sort: 'worst', desc: false, status: 'all', tags: [], q: '' };

/** Ascending unless told: text columns read A→Z first, figures biggest first. */
export function defaultDesc(key: SortKey): boolean {
  return !(key === 'worst' || key === 'name' || key === 'status');
}

const pick = <T extends string>(all: readonly T[], v: string | null, dflt: T): T =>
  v !== null && (all as readonly string[]).includes(v) ? (v as T) : dflt;

export function parseQuery(search: string): FleetQuery {
  const p = new URLSearchParams(search);
  const sort = pick(SORT_KEYS, p.get('sort'), 'worst');
  const dir = p.get('dir');
  return {
    sort,
    desc: dir === 'desc' ? true : dir === 'asc' ? false : defaultDesc(sort),
    status: pick(STATUS_FILTERS, p.get('status'), 'all'),
    tags: p.getAll('tag').filter((t) => t.includes(':')),
    q: (p.get('q') ?? '').slice(0, 200),
  };
}

/** Only what differs from the default goes in the URL; other params (e.g. view) are kept. */
export function queryToSearch(q: FleetQuery, current = ''): string {
  const p = new URLSearchParams(current);
  for (const k of ['sort', 'dir', 'status', 'tag', 'q']) p.delete(k);
  if (q.sort !== 'worst') p.set('sort', q.sort);
  if (q.desc !== defaultDesc(q.sort)) p.set('dir', q.desc ? 'desc' : 'asc');
  if (q.status !== 'all') p.set('status', q.status);
  for (const t of q.tags) p.append('tag', t);
  if (q.q) p.set('q', q.q);
  const s = p.toString();
  return s ? `?${s}` : '';
}

export const isStalled = (r: OverviewRow) => (r.stalled_groups ?? 0) > 0;

/** Worst first: stalled (most groups first), then down, then the deepest queue, the longest wait, alerts. */
function worstRank(r: OverviewRow): number {
  if (isStalled(r)) return 0;
  if (r.status === 'down') return 1;
  if (r.status === 'starting') return 3;
  return 2;
}

type Num = number | null | undefined;
/** Biggest first, a missing figure always last. */
const byNumDesc = (a: Num, b: Num) => (a == null ? (b == null ? 0 : 1) : b == null ? -1 : b - a);
const byName = (a: OverviewRow, b: OverviewRow) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function compareWorst(a: OverviewRow, b: OverviewRow): number {
  return (
    worstRank(a) - worstRank(b) ||
    byNumDesc(a.stalled_groups, b.stalled_groups) ||
    byNumDesc(a.queue_length ?? a.queued_connections, b.queue_length ?? b.queued_connections) ||
    byNumDesc(a.longest_wait_ms, b.longest_wait_ms) ||
    byNumDesc(a.active_alerts, b.active_alerts) ||
    byName(a, b)
  );
}

const STATUS_ORDER: Record<string, number> = { down: 0, starting: 1, up: 2 };
const COLUMN_VALUE: Partial<Record<SortKey, (r: OverviewRow) => Num>> = {
  stalled: (r) => r.stalled_groups,
  queue: (r) => r.queue_length,
  wait: (r) => r.longest_wait_ms,
  queued: (r) => r.queued_connections,
  threads: (r) => r.threads_connected,
  qps: (r) => r.qps,
  alerts: (r) => r.active_alerts,
  polled: (r) => r.last_poll_at,
};

/** The comparator of a column; a missing figure stays last in either direction, ties go by name. */
export function comparator(sort: SortKey, desc: boolean): (a: OverviewRow, b: OverviewRow) => number {
  const flip = (n: number) => (desc ? -n : n);
  if (sort === 'worst') return (a, b) => flip(compareWorst(a, b));
  if (sort === 'name') return (a, b) => flip(byName(a, b));
  if (sort === 'status') return (a, b) => flip((STATUS_ORDER[a.status] ?? 9) - (STATUS_ORDER[b.status] ?? 9)) || byName(a, b);
  const value = COLUMN_VALUE[sort]!;
  return (a, b) => {
    const va = value(a);
    const vb = value(b);
    if (va == null || vb == null) return byNumDesc(va, vb) || byName(a, b);
    return (desc ? vb - va : va - vb) || byName(a, b);
  };
}

function matchesStatus(r: OverviewRow, status: StatusFilter): boolean {
  switch (status) {
    case 'all':
      return true;
    case 'stalled':
      return isStalled(r);
    case 'alerting':
      return r.active_alerts > 0;
    default:
      return r.status === status;
  }
}

function matchesSearch(r: OverviewRow, q: string): boolean {
  if (!q) return true;
  const needle = q.toLowerCase();
  if (r.name.toLowerCase().includes(needle)) return true;
  return Object.entries(r.tags ?? {}).some(
    ([k, v]) => v.toLowerCase().includes(needle) || `${k}:${v}`.toLowerCase().includes(needle),
  );
}

/** Filter, search, then sort (`rows` is left alone). */
export function applyQuery(rows: OverviewRow[], q: FleetQuery): OverviewRow[] {
  const out = rows.filter(
    (r) =>
      matchesStatus(r, q.status) &&
      q.tags.every((t) => `${t.slice(0, t.indexOf(':'))}:${r.tags?.[t.slice(0, t.indexOf(':'))]}` === t) &&
      matchesSearch(r, q.q.trim()),
  );
  return out.toSorted(comparator(q.sort, q.desc));
}

/** Every `name:value` tag seen in the fleet, sorted: the tag filter's choices. */
export function tagChoices(rows: OverviewRow[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const [k, v] of Object.entries(r.tags ?? {})) seen.add(`${k}:${v}`);
  return [...seen].toSorted();
}
