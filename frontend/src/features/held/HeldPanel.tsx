// "Who held the pool": statement digests ranked by the worker-seconds they held stalled groups (or
// held, or queued) over the page's range. A stall band's click opens the page at the stall with
// ?held=1, which brings this table into view.
import { useEffect, useRef, useState } from 'react';
import type { HeldDigest, HeldSort } from '../../api/types';
import { useLocation } from '../../app/router';
import { DASH, fmtNum, fmtSeconds } from '../../lib/format';
import type { TimeRange } from '../../lib/range';
import { Help } from '../../ui/Help';
import { ShowAll, useCapped } from '../../ui/tables';
import { Notice, Panel, SqlText } from '../../ui/ui';
import { useHeld } from './useHeld';

const SORTS: { key: HeldSort; label: string }[] = [
  { key: 'stalled', label: 'stalled s' },
  { key: 'held', label: 'held s' },
  { key: 'queued', label: 'queued s' },
];

const list = (items: string[]) => (items.length ? items.join(', ') : <span className="muted">{DASH}</span>);

export function HeldPanel({ name, range }: { name: string; range: TimeRange }) {
  const [sort, setSort] = useState<HeldSort>('stalled');
  const held = useHeld(name, range, sort);
  const { search } = useLocation();
  const opened = new URLSearchParams(search).has('held');
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (opened && held.data) ref.current?.scrollIntoView({ block: 'start' });
  }, [opened, held.data]);
  const digests = held.data?.digests ?? [];
  return (
    <div ref={ref}>
      <Panel
        title="Who held the pool"
        help={
          <Help label="who held the pool" testId="held-help">
            Statement shapes (digests) ranked by the worker-seconds their statements held a stalled thread group (stalled s), a
            group with a queue (held s), or waited in a queue (queued s, counted under the statement the connection ran last: a
            queued request is not read yet). Counted while some group has a queue or is stalled.
          </Help>
        }
        testId="held-panel"
        extra={
          <div className="seg" role="group" aria-label="Rank by">
            {SORTS.map((s) => (
              <button
                key={s.key}
                type="button"
                className={`seg-btn ${sort === s.key ? 'seg-active' : ''}`}
                aria-pressed={sort === s.key}
                onClick={() => setSort(s.key)}
                data-testid={`held-sort-${s.key}`}
              >
                {s.label}
              </button>
            ))}
          </div>
        }
      >
        {held.error ? (
          <Notice tone="warn" title="Could not read who held the pool" testId="held-error">
            {held.error.message}
          </Notice>
        ) : !held.data ? (
          <div className="loading">…</div>
        ) : digests.length === 0 ? (
          <div className="empty" data-testid="held-empty">
            No group had a queue or a stall in this range: nobody held the pool.
          </div>
        ) : (
          <HeldTable digests={digests} />
        )}
      </Panel>
    </div>
  );
}

export function HeldTable({ digests }: { digests: HeldDigest[] }) {
  const { shown, all, setAll, capped } = useCapped(digests);
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="held-table">
        <thead>
          <tr>
            <th>statement</th>
            <th className="num">stalled s</th>
            <th className="num">held s</th>
            <th className="num">queued s</th>
            <th className="num">stall episodes</th>
            <th className="num">calls</th>
            <th className="num">max time</th>
            <th>users @ hosts</th>
            <th>groups</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((d) => (
            <tr key={d.digest} data-testid="held-row" data-digest={d.digest}>
              <td className="sql">
                <SqlText sql={d.text} max={120} />
              </td>
              <td className="num">{fmtNum(d.stalled_s)}</td>
              <td className="num">{fmtNum(d.held_s)}</td>
              <td className="num">{fmtNum(d.queued_s)}</td>
              <td className="num">{d.stall_episodes}</td>
              <td className="num">{d.calls}</td>
              <td className="num">{fmtSeconds(d.max_time_s)}</td>
              <td className="small">{list(d.clients)}</td>
              <td className="small">{list(d.groups)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {capped ? <ShowAll total={digests.length} all={all} setAll={setAll} what="digests" testId="held-show-all" /> : null}
    </div>
  );
}
