// The target page's recommendations and audit log: queries refetched every few seconds.
import { useQuery } from '@tanstack/react-query';
import { tookEffect, type AuditEntry } from '../../api/changes';
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

/** Audit entries as chart markers: changes that took effect (or probably did), auto-reverts in red. */
export function auditMarkers(entries: readonly AuditEntry[] | null): ChartMarker[] {
  return (entries ?? [])
    .filter((e) => tookEffect(e.result))
    .map((e) => ({
      id: `#${e.id}`,
      t: e.ts,
      label: `${e.variable} ${e.old_value ?? '—'} → ${e.new_value}${e.action === 'apply' ? '' : ` (${e.action.replace('_', '-')})`}${e.result === 'unverified' ? ' (unverified)' : ''}`,
      tone:
        e.action === 'auto_revert' ? ('auto-revert' as const) : e.action === 'revert' ? ('revert' as const) : ('apply' as const),
    }));
}
