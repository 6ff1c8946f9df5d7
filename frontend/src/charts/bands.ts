// The spans a target's charts draw as bands: its alerts (from the alert history of the range) and
// its stalls (runs of polls whose tp_group_stalled verdict is set, over all groups).
import type { Alert, Series } from '../api/types';
import { targetPath } from '../app/router';
import { fixedRange, serializeRange, type TimeRange } from '../lib/range';
import type { Band } from './layers';

/** The target's alerts that fired, as bands; `highlight`: the alert the URL names. */
export function alertBands(alerts: readonly Alert[], highlight: number | null = null): Band[] {
  return alerts
    .filter((a) => a.fired_at !== null)
    .map((a) => ({
      id: `alert-${a.id ?? a.fingerprint}`,
      kind: 'alert' as const,
      from: a.fired_at!,
      to: a.resolved_at,
      label: a.summary,
      severity: a.severity,
      highlight: highlight !== null && a.id === highlight,
      alertId: a.id,
    }));
}

interface Run {
  from: number;
  to: number;
  groups: Set<string>;
}

/**
 * Stall spans from the per-group verdict series: a run of stalled points (a point holds until the
 * next one, at most `holdS`), merged across groups where they overlap.
 */
export function stallBands(stalled: readonly Series[], holdS: number): Band[] {
  const runs: Run[] = [];
  for (const s of stalled) {
    const group = s.labels.group ?? '?';
    let open: Run | null = null;
    s.points.forEach(([t, v], i) => {
      const next = s.points[i + 1]?.[0];
      const end = next !== undefined ? Math.min(next, t + holdS) : t + holdS;
      if (v !== null && v > 0) {
        if (open && t <= open.to) open.to = end;
        else {
          open = { from: t, to: end, groups: new Set([group]) };
          runs.push(open);
        }
      } else open = null;
    });
  }
  runs.sort((a, b) => a.from - b.from);
  const merged: Run[] = [];
  for (const r of runs) {
    const last = merged.at(-1);
    if (last && r.from <= last.to) {
      last.to = Math.max(last.to, r.to);
      for (const g of r.groups) last.groups.add(g);
    } else merged.push({ ...r, groups: new Set(r.groups) });
  }
  return merged.map((r) => {
    const groups = [...r.groups].toSorted((a, b) => Number(a) - Number(b) || a.localeCompare(b));
    return {
      id: `stall-${r.from}`,
      kind: 'stall' as const,
      from: r.from,
      to: r.to,
      label: `${groups.length === 1 ? 'group' : 'groups'} ${groups.join(', ')} stalled`,
    };
  });
}

/**
 * The range that shows a span with some time around it (a quarter of it, at least 30 s each side),
 * never past now. A page's clock ticks (useNow) and an alert is pushed between two ticks: a `now`
 * read before the span began still gives a range that holds its start.
 */
export function spanRange(from: number, to: number | null, now: number): TimeRange {
  const latest = Math.max(now, to ?? from);
  const end = to ?? latest;
  const pad = Math.max(30, (end - from) / 4);
  return fixedRange(from - pad, Math.min(latest, end + pad));
}

/** The target page's address showing an alert's span on its charts, with its band marked. */
export function alertChartsPath(a: Alert, now: number): string {
  const at = a.fired_at ?? a.started_at;
  const q = serializeRange(spanRange(at, a.resolved_at, now), a.id !== null ? `alert=${a.id}` : '');
  return targetPath(a.target) + q;
}
