// The fleet table: one row per target, worst first, sortable, filterable by status and tag, searchable;
// only the rows in view are in the DOM (virtualised), so 1,000 targets scroll smoothly.
import { observeElementRect, useVirtualizer, type Virtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef } from 'react';
import { M, type MetricName } from '../../api/metrics.gen';
import type { OverviewRow } from '../../api/types';
import { targetPath } from '../../app/router';
import { shownStatus, STALE_TITLE } from '../../lib/domain';
import { fmtAgo, fmtMs, fmtNum, fmtRateCompact, plural } from '../../lib/format';
import { MetricHelp } from '../../ui/Help';
import { Badge, Link } from '../../ui/ui';
import { applyQuery, defaultDesc, isStalled, STATUS_FILTERS, tagChoices, type FleetQuery, type SortKey } from './fleet';

export const ROW_HEIGHT = 36;
const OVERSCAN = 8;
/** The viewport's height before layout has measured it (CSS caps .fleet-scroll at 720 px). */
export const UNMEASURED_HEIGHT = 720;

/** The library's observer, with a not-yet-laid-out (0 px) viewport taken as UNMEASURED_HEIGHT: the
 * first frame then shows rows rather than none, and a DOM without layout (jsdom) renders a window. */
function observeRect(instance: Virtualizer<HTMLDivElement, Element>, cb: (rect: { width: number; height: number }) => void) {
  return observeElementRect(instance, (rect) => cb(rect.height > 0 ? rect : { width: rect.width, height: UNMEASURED_HEIGHT }));
}

/** `metrics`: the catalog series a column shows, whose help (ui/Help.tsx) explains it; `note` says how the row combines them. */
const COLUMNS: {
  key: SortKey;
  label: string;
  title: string;
  numeric?: boolean;
  metrics?: readonly MetricName[];
  note?: string;
}[] = [
  { key: 'name', label: 'Target', title: 'name and tags' },
  { key: 'status', label: 'Status', title: 'up, down or starting (with the reason)', metrics: [M.target_up] },
  {
    key: 'stalled',
    label: 'Stalled',
    title: 'stalled thread groups',
    numeric: true,
    metrics: [M.tp_group_stalled],
    note: 'Shown as stalled groups / all groups.',
  },
  {
    key: 'queue',
    label: 'Queue',
    title: 'requests queued in the thread groups',
    numeric: true,
    metrics: [M.tp_group_queue_length],
    note: 'Summed over the groups.',
  },
  {
    key: 'wait',
    label: 'Longest wait',
    title: 'the longest a queued request has waited',
    numeric: true,
    metrics: [M.tp_queue_wait_max_ms],
  },
  {
    key: 'queued',
    label: 'Queued conns',
    title: 'connections waiting in the queue',
    numeric: true,
    metrics: [M.tp_queued_connections],
  },
  {
    key: 'threads',
    label: 'Conn. / running',
    title: 'threads connected / threads running',
    numeric: true,
    metrics: [M.threads_connected, M.threads_running],
    note: 'Shown as connected / running.',
  },
  { key: 'qps', label: 'QPS', title: 'queries per second', numeric: true, metrics: [M.qps] },
  { key: 'alerts', label: 'Alerts', title: 'firing alerts', numeric: true },
  { key: 'polled', label: 'Last poll', title: 'when the last poll ended', numeric: true },
];

function statusCell(r: OverviewRow, now: number, intervalS: number | undefined) {
  const shown = shownStatus(r, intervalS, now);
  // Old numbers say nothing now, a stall included.
  if (shown === 'stale')
    return (
      <Badge tone="warn" title={STALE_TITLE}>
        stale
      </Badge>
    );
  if (isStalled(r)) return <Badge tone="bad">stalled</Badge>;
  if (r.status === 'down') return <Badge tone="bad">down</Badge>;
  if (r.status === 'starting') return <Badge tone="muted">starting</Badge>;
  return <Badge tone="ok">up</Badge>;
}

function Row({ r, now, top, intervalS }: { r: OverviewRow; now: number; top: number; intervalS?: number }) {
  const pool = r.pool_enabled !== false;
  return (
    <div
      role="row"
      className={`fleet-row ${isStalled(r) ? 'fleet-row-stalled' : ''} ${r.status === 'down' ? 'fleet-row-down' : ''}`}
      data-testid={`fleet-row-${r.name}`}
      data-name={r.name}
      style={{ transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
    >
      <div role="cell" className="fleet-name">
        <Link href={targetPath(r.name)} testId="target-link">
          {r.name}
        </Link>
        {Object.entries(r.tags ?? {}).map(([k, v]) => (
          <span key={k} className="fleet-tag" title={k}>
            {k}:{v}
          </span>
        ))}
      </div>
      <div role="cell" title={r.reason ?? undefined} data-testid="fleet-status">
        {statusCell(r, now, intervalS)}
        {r.status !== 'up' && r.reason ? <span className="fleet-reason">{r.reason}</span> : null}
      </div>
      <div role="cell" className="num" data-testid="fleet-stalled">
        {pool && r.groups != null ? `${r.stalled_groups ?? 0} / ${r.groups}` : '—'}
      </div>
      <div role="cell" className="num" data-testid="fleet-queue">
        {fmtNum(r.queue_length, 0)}
      </div>
      <div role="cell" className="num">
        {fmtMs(r.longest_wait_ms)}
      </div>
      <div role="cell" className="num">
        {fmtNum(r.queued_connections, 0)}
      </div>
      <div role="cell" className="num">
        {r.threads_connected == null ? '—' : `${r.threads_connected} / ${r.threads_running ?? '—'}`}
      </div>
      <div role="cell" className="num">
        {fmtRateCompact(r.qps)}
      </div>
      <div role="cell" className="num">
        {r.active_alerts ? <Badge tone="bad">{r.active_alerts}</Badge> : '0'}
      </div>
      <div role="cell" className="num muted">
        {r.last_poll_at ? fmtAgo(r.last_poll_at, now) : 'never'}
      </div>
    </div>
  );
}

export function FleetTable({
  rows,
  query,
  onQuery,
  now,
  intervalS,
}: {
  rows: OverviewRow[];
  query: FleetQuery;
  onQuery: (q: FleetQuery, replace?: boolean) => void;
  now: number;
  /** Seconds between polls (the overview's): a row older than two of them is shown stale. */
  intervalS?: number;
}) {
  const shown = useMemo(() => applyQuery(rows, query), [rows, query]);
  const tags = useMemo(() => tagChoices(rows), [rows]);
  const scrollRef = useRef<HTMLDivElement | null>(null);
  // No React Compiler here (vite.config.ts), so its memoisation caveat does not apply.
  // eslint-disable-next-line react/incompatible-library
  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    observeElementRect: observeRect,
    getItemKey: (i) => shown[i].name,
  });

  const sortBy = (key: SortKey) => onQuery({ ...query, sort: key, desc: query.sort === key ? !query.desc : defaultDesc(key) });

  return (
    <div className="fleet" data-testid="fleet">
      <div className="fleet-controls">
        <input
          type="search"
          placeholder="Search name or tag"
          aria-label="search targets by name or tag"
          data-testid="fleet-search"
          value={query.q}
          onChange={(e) => onQuery({ ...query, q: e.target.value }, true)}
        />
        <label>
          Status{' '}
          <select
            data-testid="fleet-status-filter"
            value={query.status}
            onChange={(e) => onQuery({ ...query, status: e.target.value as FleetQuery['status'] })}
          >
            {STATUS_FILTERS.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tag{' '}
          <select
            data-testid="fleet-tag-filter"
            value={query.tags[0] ?? ''}
            onChange={(e) => onQuery({ ...query, tags: e.target.value ? [e.target.value] : [] })}
          >
            <option value="">any</option>
            {[...new Set([...tags, ...query.tags])].map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        {query.sort !== 'worst' ? (
          <button type="button" data-testid="fleet-worst-first" onClick={() => onQuery({ ...query, sort: 'worst', desc: false })}>
            Worst first
          </button>
        ) : null}
        <span className="muted small" data-testid="fleet-count">
          {shown.length === rows.length ? plural(rows.length, 'target') : `${shown.length} of ${plural(rows.length, 'target')}`}
        </span>
      </div>
      <div role="table" aria-label="targets" aria-rowcount={shown.length + 1} className="fleet-table">
        <div role="row" className="fleet-row fleet-head">
          {COLUMNS.map((c) => (
            <div
              key={c.key}
              role="columnheader"
              className={c.numeric ? 'num' : undefined}
              aria-sort={query.sort === c.key ? (query.desc ? 'descending' : 'ascending') : 'none'}
            >
              <button
                type="button"
                className="fleet-sort"
                title={`sort by ${c.title}`}
                data-testid={`fleet-sort-${c.key}`}
                onClick={() => sortBy(c.key)}
              >
                {c.label}
                {query.sort === c.key ? (query.desc ? ' ▼' : ' ▲') : ''}
              </button>
              {c.metrics ? (
                <>
                  {' '}
                  <MetricHelp metrics={c.metrics} label={c.label} note={c.note} testId={`fleet-help-${c.key}`} />
                </>
              ) : null}
            </div>
          ))}
        </div>
        <div ref={scrollRef} className="fleet-scroll" data-testid="fleet-scroll">
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualizer.getVirtualItems().map((v) => (
              <Row key={v.key} r={shown[v.index]} now={now} top={v.start} intervalS={intervalS} />
            ))}
          </div>
        </div>
        {shown.length === 0 ? (
          <div className="muted fleet-empty" data-testid="fleet-empty">
            No target matches.
          </div>
        ) : null}
      </div>
    </div>
  );
}
