// Data hooks for the target page's recommendations and audit log: fetched now, then every few seconds.
import { useCallback, useEffect, useState } from 'react';
import { fetchAudit, fetchRecommendations, tookEffect, type AuditEntry, type Recommendations } from '../../api/changes';
import { errorMessage } from '../../api/client';
import type { ChartMarker } from '../../charts/TimeSeriesChart';
import { useInterval } from '../../lib/hooks';

export const CHANGES_REFRESH_MS = 5000;

function usePolled<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const refresh = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    const ctrl = new AbortController();
    load(ctrl.signal)
      .then((d) => {
        setData(d);
        setError(null);
      })
      .catch((err: unknown) => {
        if (!ctrl.signal.aborted) setError(errorMessage(err));
      });
    return () => ctrl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  useInterval(refresh, CHANGES_REFRESH_MS, true);
  return { data, error, refresh };
}

export function useRecommendations(target: string) {
  return usePolled<Recommendations>((s) => fetchRecommendations(target, s), [target]);
}

export function useAudit(target: string) {
  return usePolled<AuditEntry[]>((s) => fetchAudit(target, s), [target]);
}

/** Audit entries as chart markers: changes that took effect (or probably did), auto-reverts in red. */
export function auditMarkers(entries: readonly AuditEntry[] | null): ChartMarker[] {
  return (entries ?? [])
    .filter((e) => tookEffect(e.result))
    .map((e) => ({
      id: `#${e.id}`,
      t: e.ts,
      label: `${e.variable} ${e.old_value ?? '—'} → ${e.new_value}${e.action === 'apply' ? '' : ` (${e.action.replace('_', '-')})`}${e.result === 'unverified' ? ' (unverified)' : ''}`,
      color: e.action === 'auto_revert' ? '#f2495c' : e.action === 'revert' ? '#b877d9' : '#ff9830',
    }));
}
