// Fleet data: GET /api/overview (one compact row per target) every 2 s, 5 s while it fails; cheap for hundreds of targets.
import { useQuery } from '@tanstack/react-query';
import { overviewQuery } from '../../api/queries';
import type { OverviewRow } from '../../api/types';
import { refreshEvery, usePrefs } from '../../lib/prefs';

export const OVERVIEW_REFRESH_MS = 2000;
export const OVERVIEW_RETRY_MS = 5000;

export interface OverviewData {
  rows: OverviewRow[] | null;
  error: Error | null;
  /** Browser time (epoch s) of the last successful fetch. */
  updatedAt: number | null;
  /** Seconds between polls, as the overview says. */
  intervalS?: number;
}

export function useOverview(): OverviewData {
  const prefs = usePrefs();
  const q = useQuery({
    ...overviewQuery,
    refetchInterval: (query) => refreshEvery(prefs, query.state.status === 'error' ? OVERVIEW_RETRY_MS : OVERVIEW_REFRESH_MS),
  });
  return {
    rows: q.data?.targets ?? null,
    error: q.error,
    updatedAt: q.dataUpdatedAt ? q.dataUpdatedAt / 1000 : null,
    intervalS: q.data?.poll_interval_s,
  };
}
