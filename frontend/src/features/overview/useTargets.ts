// Overview data: GET /api/targets once, then live updates from SSE; falls back to a 5 s refetch while SSE is down.
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, fetchTargets } from '../../api/client';
import { useLiveChannel, type LiveStatus } from '../../api/live';
import type { PollEvent, Target } from '../../api/types';
import { useInterval } from '../../lib/hooks';

export const FALLBACK_REFRESH_MS = 5000;
export const SLOW_RESYNC_MS = 30000;

export interface TargetsData {
  targets: Target[] | null;
  error: ApiError | Error | null;
  liveStatus: LiveStatus;
  /** Browser time (epoch s) of the last successful fetch or live event. */
  updatedAt: number | null;
  refresh: () => void;
}

/** Replace (or add) one target in the list, keeping the list order stable. */
export function upsertTarget(list: Target[] | null, t: Target): Target[] {
  if (!list) return [t];
  const i = list.findIndex((x) => x.name === t.name);
  if (i < 0) return [...list, t];
  const out = list.slice();
  out[i] = t;
  return out;
}

export function useTargets(): TargetsData {
  const [targets, setTargets] = useState<Target[] | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [updatedAt, setUpdatedAt] = useState<number | null>(null);
  const inflight = useRef<AbortController | null>(null);

  const refresh = useCallback(() => {
    inflight.current?.abort();
    const ac = new AbortController();
    inflight.current = ac;
    fetchTargets(ac.signal)
      .then((list) => {
        setTargets(list);
        setError(null);
        setUpdatedAt(Date.now() / 1000);
      })
      .catch((err: unknown) => {
        if (ac.signal.aborted) return;
        setError(err instanceof Error ? err : new Error(String(err)));
      });
  }, []);

  useEffect(() => {
    refresh();
    return () => inflight.current?.abort();
  }, [refresh]);

  const onPoll = useCallback((ev: PollEvent) => {
    if (!ev.target_info) return;
    setTargets((list) => upsertTarget(list, ev.target_info));
    setError(null);
    setUpdatedAt(Date.now() / 1000);
  }, []);

  const liveStatus = useLiveChannel(undefined, onPoll);
  const sseDown = liveStatus === 'error' || liveStatus === 'unsupported';
  useInterval(refresh, FALLBACK_REFRESH_MS, sseDown);
  // Even with SSE healthy, a slow resync catches targets that never emit polls (e.g. stuck connecting).
  useInterval(refresh, SLOW_RESYNC_MS, !sseDown);

  return { targets, error, liveStatus, updatedAt, refresh };
}
