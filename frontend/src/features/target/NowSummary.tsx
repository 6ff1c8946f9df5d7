// The one line at the top of the target page that says what is wrong right now: stalled groups and
// for how long, the queue, alerts firing, recommendations. Everything below explains it.
import type { Recommendations } from '../../api/changes';
import { M } from '../../api/metrics.gen';
import type { Alert, Series, Target, TargetState } from '../../api/types';
import { fmtMs, fmtSeconds, plural } from '../../lib/format';
import { seriesOf } from '../../lib/series';

/** How long a group has been stalled up to `at`: from its stall alert, else from its run of stalled polls. */
export function stalledFor(group: string, at: number, alerts: readonly Alert[], stalled: readonly Series[]): number | null {
  const alert = alerts.find((a) => a.rule === 'group_stalled' && a.group === group && a.status !== 'resolved');
  if (alert) return Math.max(0, at - alert.started_at);
  const points = stalled.find((s) => s.labels.group === group)?.points ?? [];
  let since: number | null = null;
  for (let i = points.length - 1; i >= 0 && (points[i][1] ?? 0) > 0; i--) since = points[i][0];
  return since === null ? null : Math.max(0, at - since);
}

type Tone = 'ok' | 'warn' | 'bad';

export function nowSummary(
  target: Target,
  state: TargetState | null,
  alerts: readonly Alert[],
  recs: Recommendations | null,
  history: readonly Series[],
): { text: string; tone: Tone } {
  const firing = alerts.filter((a) => a.status === 'firing');
  const tail = [
    firing.length ? `${plural(firing.length, 'alert')} firing` : 'no alert firing',
    recs ? (recs.active.length ? plural(recs.active.length, 'recommendation') : 'no recommendation') : null,
  ]
    .filter(Boolean)
    .join('; ');
  if (target.status === 'down') return { text: `Down: ${target.reason ?? 'no answer'}; ${tail}`, tone: 'bad' };
  if (!state) return { text: `Waiting for the first poll; ${tail}`, tone: 'warn' };

  const parts: string[] = [];
  const stalled = state.groups.filter((g) => g.stalled);
  const stalledSeries = seriesOf(history, M.tp_group_stalled);
  if (stalled.length) {
    const longest = Math.max(...stalled.map((g) => stalledFor(String(g.group_id), state.ts, alerts, stalledSeries) ?? -1));
    const ids = stalled.map((g) => g.group_id).join(', ');
    parts.push(
      `${stalled.length === 1 ? 'group' : 'groups'} ${ids} stalled${longest >= 0 ? ` ${fmtSeconds(Math.round(longest))}` : ''}`,
    );
  } else if (state.groups.length) {
    parts.push(`${plural(state.groups.length, 'group')}, none stalled`);
  }
  const queued = state.queued_connections ?? state.groups.reduce((n, g) => n + (g.queue_length ?? 0), 0);
  const oldest = Math.max(0, ...state.groups.map((g) => g.oldest_queued_ms ?? 0));
  if (state.groups.length || state.queued_connections !== null) {
    parts.push(queued ? `${queued} queued${oldest ? `, oldest ${fmtMs(oldest)}` : ''}` : 'nothing queued');
  } else if (state.threads) {
    parts.push(`${state.threads.running ?? '—'} running of ${state.threads.connected ?? '—'} connected`);
  }
  const tone: Tone =
    stalled.length || firing.some((a) => a.severity === 'critical') ? 'bad' : queued || firing.length ? 'warn' : 'ok';
  return { text: `${parts.join(', ')}; ${tail}`, tone };
}

export function NowSummary(props: {
  target: Target;
  state: TargetState | null;
  alerts: readonly Alert[];
  recs: Recommendations | null;
  history: readonly Series[];
}) {
  const { text, tone } = nowSummary(props.target, props.state, props.alerts, props.recs, props.history);
  return (
    <p className={`now-summary now-${tone}`} data-testid="now-summary" data-tone={tone}>
      <strong>Now:</strong> {text}
    </p>
  );
}
