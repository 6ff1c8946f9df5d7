// Per-group table of the current poll: thread counts, queue, rates and Poolscope's stall verdict per group.
import type { GroupState } from '../../api/types';
import { fmtMs, fmtNum, fmtPercent, fmtRate } from '../../lib/format';
import { stallExplanation, stallLabel } from '../../lib/domain';
import { M, type MetricName } from '../../api/metrics.gen';
import { Help, MetricHelp } from '../../ui/Help';
import { Badge } from '../../ui/ui';

/** A numeric column of a catalog metric, with the catalog's help beside its name. */
function Th({ metric, children, testId }: { metric: MetricName; children: string; testId?: string }) {
  return (
    <th className="num">
      <MetricHelp metrics={[metric]} label={children} trigger={children} testId={testId ? `${testId}-help` : undefined} />
    </th>
  );
}

export interface GroupTableProps {
  groups: GroupState[];
  /** @@thread_pool_stall_limit in ms, for the verdict tooltip. */
  stallLimitMs?: number | null;
  /** Queue times come from the timer tick (thread_pool_exact_stats=OFF). */
  coarse?: boolean;
}

function sum(groups: GroupState[], f: (g: GroupState) => number | null): number | null {
  let total = 0;
  let any = false;
  for (const g of groups) {
    const v = f(g);
    if (v !== null && v !== undefined) {
      total += v;
      any = true;
    }
  }
  return any ? total : null;
}

export function GroupTable({ groups, stallLimitMs, coarse }: GroupTableProps) {
  const sorted = groups.toSorted((a, b) => a.group_id - b.group_id);
  if (sorted.length === 0) {
    return (
      <div className="empty" data-testid="group-table-empty">
        The server reported no thread groups in the last poll.
      </div>
    );
  }
  const oldest = Math.max(...sorted.map((g) => g.oldest_queued_ms ?? 0));
  // MySQL Enterprise reports stalled statements per group (tp_thread_group_state / _stats).
  const mysqlStalls = sorted.some((g) => g.stalled_threads != null || g.stalled_query_ratio != null);
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="group-table">
        <thead>
          <tr>
            <th>group</th>
            <Th metric={M.tp_group_connections}>connections</Th>
            <Th metric={M.tp_group_threads}>threads</Th>
            <Th metric={M.tp_group_active_threads}>active</Th>
            <Th metric={M.tp_group_standby_threads}>standby</Th>
            <Th metric={M.tp_group_queue_length} testId="group-col-queue">
              queue
            </Th>
            <th className="num">
              <Help label="oldest queued" trigger={`oldest queued${coarse ? ' *' : ''}`}>
                How long the group's oldest queued request has waited, in ms
                {coarse ? ' (coarse mode: from the timer tick, overstated)' : ''}.
              </Help>
            </th>
            <Th metric={M.tp_group_stalls_per_s}>stalls</Th>
            {mysqlStalls ? (
              <>
                <Th metric={M.tp_group_stalled_threads}>stalled stmts</Th>
                <Th metric={M.tp_group_stalled_query_ratio}>stalled ratio</Th>
              </>
            ) : null}
            <Th metric={M.tp_group_dequeues_per_s}>dequeues</Th>
            <Th metric={M.tp_group_thread_creations_per_s}>thr. created</Th>
            <th>
              <MetricHelp
                metrics={[M.tp_group_stalled]}
                label="verdict"
                trigger="verdict"
                note="STALLED (reason) when the stall counter rose, no request was dequeued for longer than thread_pool_stall_limit, or the server flagged the group."
              />
            </th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((g) => {
            const id = g.group_id;
            const rowClass = [g.stalled ? 'row-stalled' : '', g.retired ? 'row-retired' : ''].join(' ').trim();
            return (
              <tr key={id} className={rowClass} data-testid={`group-row-${id}`} data-stalled={g.stalled ? 'true' : 'false'}>
                <td>
                  <span className="mono">{id}</span>
                  {g.retired ? (
                    <Badge
                      tone="muted"
                      testId={`group-retired-${id}`}
                      title="GROUP_ID ≥ @@thread_pool_size: left over after thread_pool_size was lowered. Its connections move to live groups on their next request."
                    >
                      retired
                    </Badge>
                  ) : null}
                  {g.has_listener === false ? (
                    <span className="muted small" data-testid={`group-no-listener-${id}`}>
                      {' '}
                      no listener*
                    </span>
                  ) : null}
                </td>
                <td className="num">{fmtNum(g.connections)}</td>
                <td className="num">{fmtNum(g.threads)}</td>
                <td className="num">{fmtNum(g.active_threads)}</td>
                <td className="num">{fmtNum(g.standby_threads)}</td>
                <td className={`num ${(g.queue_length ?? 0) > 0 ? 'cell-hot' : ''}`} data-testid={`group-queue-${id}`}>
                  {fmtNum(g.queue_length)}
                </td>
                <td
                  className={`num ${g.oldest_queued_ms !== null && g.oldest_queued_ms === oldest && oldest > 0 ? 'cell-hot' : ''}`}
                >
                  {fmtMs(g.oldest_queued_ms)}
                </td>
                {/* On MySQL Enterprise a statement past the stall limit is routine (the group starts another): not red. */}
                <td className={`num ${(g.stalls_per_s ?? 0) > 0 && !mysqlStalls ? 'cell-bad' : ''}`}>
                  {fmtRate(g.stalls_per_s)}
                </td>
                {mysqlStalls ? (
                  <>
                    <td
                      className={`num ${(g.stalled_threads ?? 0) > 0 ? 'cell-hot' : ''}`}
                      data-testid={`group-stalled-stmts-${id}`}
                    >
                      {fmtNum(g.stalled_threads ?? null)}
                    </td>
                    <td className="num" data-testid={`group-stalled-ratio-${id}`}>
                      {fmtPercent(g.stalled_query_ratio ?? null, 2)}
                    </td>
                  </>
                ) : null}
                <td className="num">{fmtRate(g.dequeues_per_s)}</td>
                <td className="num">{fmtRate(g.thread_creations_per_s)}</td>
                <td data-testid={`group-verdict-${id}`}>
                  {g.stalled ? (
                    <span
                      className="stall-label"
                      title={
                        stallExplanation(g.stall_reason) +
                        (stallLimitMs ? ` thread_pool_stall_limit = ${fmtNum(stallLimitMs)} ms.` : '')
                      }
                    >
                      {stallLabel(g.stall_reason)}
                    </span>
                  ) : (
                    <span className="muted">ok</span>
                  )}
                  {g.is_stalled ? (
                    <Badge tone="bad" title="The server's instantaneous IS_STALLED flag was set at this poll (rarely caught).">
                      IS_STALLED
                    </Badge>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
        {sorted.length > 1 ? (
          <tfoot>
            <tr>
              <td>total</td>
              <td className="num">{fmtNum(sum(sorted, (g) => g.connections))}</td>
              <td className="num">{fmtNum(sum(sorted, (g) => g.threads))}</td>
              <td className="num">{fmtNum(sum(sorted, (g) => g.active_threads))}</td>
              <td className="num">{fmtNum(sum(sorted, (g) => g.standby_threads))}</td>
              <td className="num" data-testid="group-queue-total">
                {fmtNum(sum(sorted, (g) => g.queue_length))}
              </td>
              <td className="num">{fmtMs(oldest > 0 ? oldest : null)}</td>
              <td className="num">{fmtRate(sum(sorted, (g) => g.stalls_per_s))}</td>
              {mysqlStalls ? (
                <>
                  <td className="num">{fmtNum(sum(sorted, (g) => g.stalled_threads ?? null))}</td>
                  <td />
                </>
              ) : null}
              <td className="num">{fmtRate(sum(sorted, (g) => g.dequeues_per_s))}</td>
              <td className="num">{fmtRate(sum(sorted, (g) => g.thread_creations_per_s))}</td>
              <td />
            </tr>
          </tfoot>
        ) : null}
      </table>
      {sorted.some((g) => g.has_listener === false) ? (
        <div className="table-note" data-testid="group-no-listener-note">
          * no listener: none of the group&apos;s threads is waiting for new requests right now. All of them are busy, so requests
          from its connections wait until a thread finishes its statement or the stall timer adds one.
        </div>
      ) : null}
      {coarse ? (
        <div className="table-note text-warn" data-testid="group-coarse-note">
          * coarse queue-time mode (thread_pool_exact_stats=OFF): enqueue times come from the timer tick and read far higher than
          the real wait.
        </div>
      ) : null}
    </div>
  );
}
