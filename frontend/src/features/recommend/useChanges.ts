// The target page's recommendations and audit log: queries refetched every few seconds.
import { useQueries, useQuery } from '@tanstack/react-query';
import { fetchComparison, tookEffect, type AuditEntry, type Comparison } from '../../api/changes';
import { auditQuery, recommendationsQuery } from '../../api/queries';
import type { ChartMarker } from '../../charts/layers';
import { refreshEvery, usePrefs } from '../../lib/prefs';

export const CHANGES_REFRESH_MS = 5000;

export function useRecommendations(target: string) {
  const every = refreshEvery(usePrefs(), CHANGES_REFRESH_MS);
  const q = useQuery({ ...recommendationsQuery(target), refetchInterval: every });
  return { data: q.data ?? null, error: q.error?.message ?? null };
}

export function useAudit(target: string) {
  const every = refreshEvery(usePrefs(), CHANGES_REFRESH_MS);
  const q = useQuery({ ...auditQuery(target), refetchInterval: every });
  return { data: q.data ?? null, error: q.error?.message ?? null };
}

/** How many of the newest applied changes show their verdict on the charts (a request each). */
export const VERDICTS_ON_CHARTS = 5;

export function comparisonQuery(target: string, id: number) {
  return {
    queryKey: ['target', target, 'compare', id] as const,
    queryFn: ({ signal }: { signal?: AbortSignal }) => fetchComparison(target, id, signal),
    retry: false,
  };
}

// At module level: a combine function made anew on each render would run on each render.
function byChange(results: readonly { data?: Comparison }[]): ReadonlyMap<number, Comparison> {
  return new Map(results.flatMap((r) => (r.data ? [[r.data.change_id, r.data] as const] : [])));
}

/** The verdicts of the newest applied changes, by change id (the audit panel shares the queries). */
export function useVerdicts(target: string, entries: readonly AuditEntry[] | null): ReadonlyMap<number, Comparison> {
  const every = refreshEvery(usePrefs(), CHANGES_REFRESH_MS);
  const applied = (entries ?? []).filter((e) => e.action === 'apply' && tookEffect(e.result)).slice(0, VERDICTS_ON_CHARTS);
  return useQueries({
    // A verdict whose window after has ended no longer changes (and each costs the server a
    // bootstrap): asked again only while it is still running.
    queries: applied.map((e) => ({
      ...comparisonQuery(target, e.id),
      refetchInterval: (q: { state: { data?: Comparison } }) => (q.state.data?.complete ? false : every),
    })),
    combine: byChange,
  });
}

/** A verdict in a word or two for a chart label: "load changed" rather than the whole headline. */
export function verdictShort(c: Comparison): string {
  if (c.verdict !== 'inconclusive') return c.verdict;
  if (!c.complete) return 'judging…';
  if (c.load.some((l) => l.shifted)) return 'inconclusive: load changed';
  if (c.overlaps.length) return 'inconclusive: overlaps';
  return 'inconclusive';
}

/** Audit entries as chart markers: changes that took effect (or probably did), auto-reverts in red;
 * an applied change carries its verdict when it is known. */
export function auditMarkers(
  entries: readonly AuditEntry[] | null,
  verdicts: ReadonlyMap<number, Comparison> = new Map(),
): ChartMarker[] {
  return (entries ?? [])
    .filter((e) => tookEffect(e.result))
    .map((e) => ({
      note: verdicts.has(e.id) ? { short: verdictShort(verdicts.get(e.id)!), long: verdicts.get(e.id)!.headline } : undefined,
      id: `#${e.id}`,
      t: e.ts,
      label: `${e.variable} ${e.old_value ?? '—'} → ${e.new_value}${e.action === 'apply' ? '' : ` (${e.action.replace('_', '-')})`}${e.result === 'unverified' ? ' (unverified)' : ''}`,
      tone:
        e.action === 'auto_revert' ? ('auto-revert' as const) : e.action === 'revert' ? ('revert' as const) : ('apply' as const),
    }));
}
