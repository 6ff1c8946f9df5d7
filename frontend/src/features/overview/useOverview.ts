// Fleet data: GET /api/overview (one compact row per target) every 2 s; cheap for hundreds of targets.
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, fetchOverview } from '../../api/client';
import type { OverviewRow } from '../../api/types';
import { useInterval } from '../../lib/hooks';

export const OVERVIEW_REFRESH_MS = 2000;
export const OVERVIEW_RETRY_MS = 5000;

export interface OverviewData {
  rows: OverviewRow[] | null;
  error: ApiError | Error | null;
  /** Browser time (epoch s) of the last successful fetch. */
  updatedAt: number | null;
}

export function useOverview(): OverviewData {
  const [rows, setRows] = useState<OverviewRow[] | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [updatedAt, setUpdatedAt] = useState<number | null>(null);
  const inflight = useRef<AbortController | null>(null);

  const refresh = useCallback(() => {
    if (inflight.current) return; // a slow answer: wait for it rather than pile up requests
    const ac = new AbortController();
    inflight.current = ac;
    fetchOverview(ac.signal)
      .then((o) => {
        setRows(o.targets);
        setError(null);
        setUpdatedAt(Date.now() / 1000);
      })
      .catch((err: unknown) => {
        if (ac.signal.aborted) return;
        setError(err instanceof Error ? err : new Error(String(err)));
      })
      .finally(() => {
        if (inflight.current === ac) inflight.current = null;
      });
  }, []);

  useEffect(() => {
    refresh();
    return () => {
      inflight.current?.abort();
      inflight.current = null;
    };
  }, [refresh]);
  useInterval(refresh, OVERVIEW_REFRESH_MS, error === null);
  useInterval(refresh, OVERVIEW_RETRY_MS, error !== null);
  return { rows, error, updatedAt };
}
