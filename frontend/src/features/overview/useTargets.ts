// The card view's data: GET /api/targets, then each poll from the live feed; refetched every 5 s while the feed is down.
import { useQuery } from '@tanstack/react-query';
import { streamDown, useLiveFeed, type LiveStatus } from '../../api/live';
import { targetsQuery } from '../../api/queries';
import type { Target } from '../../api/types';
import { refreshEvery, usePrefs } from '../../lib/prefs';

export const FALLBACK_REFRESH_MS = 5000;
/** Even with the feed healthy, a slow resync catches targets that never poll (e.g. stuck connecting). */
export const SLOW_RESYNC_MS = 30000;

export interface TargetsData {
  targets: Target[] | null;
  error: Error | null;
  liveStatus: LiveStatus;
  /** Browser time (epoch s) of the last fetch or live event. */
  updatedAt: number | null;
}

export function useTargets(): TargetsData {
  const liveStatus = useLiveFeed();
  const prefs = usePrefs();
  const q = useQuery({
    ...targetsQuery,
    refetchInterval: refreshEvery(prefs, streamDown(liveStatus) ? FALLBACK_REFRESH_MS : SLOW_RESYNC_MS),
  });
  return {
    targets: q.data ?? null,
    error: q.error,
    liveStatus,
    updatedAt: q.dataUpdatedAt ? q.dataUpdatedAt / 1000 : null,
  };
}
