// Target page data: target info, current state and metric history over the URL's range, from the
// query cache; the live feed keeps them current, and they are refetched every 5 s while it is down.
import { useQuery } from '@tanstack/react-query';
import type { History } from '../../api/history';
import { streamDown, useLiveFeed, type LiveStatus } from '../../api/live';
import { alertSpansQuery, historyQuery, stateQuery, targetInfoQuery } from '../../api/queries';
import type { Alert, Target, TargetState } from '../../api/types';
import { refreshEvery, usePrefs } from '../../lib/prefs';
import type { TimeRange } from '../../lib/range';
import { AVG_AGG_METRICS, HISTORY_POINTS, livePoints, MAX_AGG_METRICS } from './metrics';

const CHARTED = { max: MAX_AGG_METRICS, avg: AVG_AGG_METRICS };

export const FALLBACK_REFRESH_MS = 5000;
/** A relative range ("last 1h") moves with the clock: fetched again this often. */
export const RELATIVE_REFRESH_MS = 30000;

export type { History };

export interface TargetData {
  target: Target | null;
  targetError: Error | null;
  state: TargetState | null;
  stateError: Error | null;
  history: History | null;
  historyLoading: boolean;
  historyError: Error | null;
  /** Alerts of this target firing at some moment of the range (bands on the charts). */
  alerts: Alert[];
  liveStatus: LiveStatus;
}

/** The history's cadence: live ones follow the feed, relative ones the clock, a fixed range never moves. */
function historyEvery(range: TimeRange, fallback: number | false, every: (ms: number) => number | false): number | false {
  if (range.kind === 'live') return fallback;
  return range.kind === 'relative' ? every(RELATIVE_REFRESH_MS) : false;
}

export function useTargetData(name: string, range: TimeRange): TargetData {
  const liveStatus = useLiveFeed(name);
  const prefs = usePrefs();
  const every = (ms: number) => refreshEvery(prefs, ms);
  const fallback = streamDown(liveStatus) ? every(FALLBACK_REFRESH_MS) : false;

  const target = useQuery({ ...targetInfoQuery(name), refetchInterval: fallback });
  const state = useQuery({ ...stateQuery(name), refetchInterval: fallback });

  const points = range.kind === 'live' ? livePoints(window.innerWidth) : HISTORY_POINTS;
  const history = useQuery({
    ...historyQuery(name, range, points, CHARTED),
    refetchInterval: historyEvery(range, fallback, every),
  });
  const alerts = useQuery({
    ...alertSpansQuery(name, range),
    refetchInterval: historyEvery(range, every(RELATIVE_REFRESH_MS), every),
  });

  return {
    target: target.data ?? null,
    targetError: target.error,
    state: state.data ?? null,
    stateError: state.error,
    history: history.data ?? null,
    historyLoading: history.isFetching && !history.data,
    historyError: history.error ?? (history.data?.failed ? new Error(history.data.failed) : null),
    alerts: alerts.data ?? [],
    liveStatus,
  };
}
