// Alerts for the whole app: the current list (a query the alert feed keeps up to date), their order,
// and the operator's actions (ack, silence), shown at once and sent to every other browser by the feed.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, post } from './http';
import { applyAlertEvent, useAlertFeed } from './live';
import { currentAlertsQuery, keys } from './queries';
import type { components } from './schema.gen';
import type { Alert, AlertsResponse, Silence } from './types';
import { refreshEvery, usePrefs } from '../lib/prefs';

/** The feed carries every change; this resync only catches one it missed. */
export const ALERTS_REFRESH_MS = 30000;

export interface AlertsState {
  /** Firing and pending alerts by fingerprint. */
  active: Map<string, Alert>;
  silences: Silence[];
  /** false until the first /api/alerts answer (or when it fails). */
  loaded: boolean;
  error: string | null;
  streamOpen: boolean;
}

/** Current alerts, live; the first user opens the alert feed, the last one closes it. */
export function useAlerts(): AlertsState {
  const feed = useAlertFeed();
  const prefs = usePrefs();
  const q = useQuery({ ...currentAlertsQuery, refetchInterval: refreshEvery(prefs, ALERTS_REFRESH_MS) });
  return {
    active: new Map((q.data?.active ?? []).map((a) => [a.fingerprint, a])),
    silences: q.data?.silences ?? [],
    loaded: q.data !== undefined,
    error: q.error ? q.error.message : null,
    streamOpen: feed === 'open',
  };
}

/** Someone is on it (acknowledged) or asked for quiet (silenced): shown greyed, never ahead of the others. */
export function handled(a: Alert): boolean {
  return a.acked_by !== null || a.silenced_by !== null;
}

const rank = (a: Alert) => (handled(a) ? 4 : 0) + (a.status === 'firing' ? 0 : 2) + (a.severity === 'critical' ? 0 : 1);

/** Unhandled before handled (acknowledged or silenced), firing before pending, critical before warning, newest first. */
export function sortAlerts(alerts: Iterable<Alert>): Alert[] {
  return [...alerts].toSorted((a, b) => rank(a) - rank(b) || (b.fired_at ?? b.started_at) - (a.fired_at ?? a.started_at));
}

export function acknowledge(id: number): Promise<Alert> {
  return post('/api/alerts/{alert_id}/ack', { params: { path: { alert_id: id } } });
}

export type SilenceRequest = components['schemas']['SilenceIn'];

export function addSilence(body: SilenceRequest): Promise<Silence> {
  return post('/api/alerts/silences', { body });
}

export function expireSilence(id: number): Promise<Silence> {
  return del('/api/alerts/silences/{silence_id}', { params: { path: { silence_id: id } } });
}

export interface AlertActions {
  acknowledge: (alert: Alert) => void;
  silence: (body: SilenceRequest) => void;
  expire: (id: number) => void;
  error: string | null;
}

/**
 * The operator's actions on alerts. Each shows in this browser as soon as the API answers (the
 * acknowledged alert, the new silence); the alert list is then fetched again, and the alert feed
 * brings the same change to every other open browser.
 */
export function useAlertActions(): AlertActions {
  const qc = useQueryClient();
  const update = (change: (cur: AlertsResponse) => AlertsResponse) =>
    qc.setQueryData<AlertsResponse>(keys.current, (cur) => (cur ? change(cur) : cur));
  const action = useMutation({
    mutationFn: (act: () => Promise<unknown>) => act(),
    // Every action changes the alert list and its logs: all of them are fetched again.
    onSettled: () => qc.invalidateQueries({ queryKey: keys.alerts }),
  });
  return {
    acknowledge: (alert) =>
      action.mutate(async () => {
        const acked = await acknowledge(alert.id!);
        update((cur) =>
          applyAlertEvent(cur, { target: acked.target, ts: acked.acked_at ?? 0, transition: 'acknowledged', alert: acked }),
        );
      }),
    silence: (body) =>
      action.mutate(async () => {
        const made = await addSilence(body);
        update((cur) => ({ ...cur, silences: [...cur.silences.filter((s) => s.id !== made.id), made] }));
      }),
    expire: (id) =>
      action.mutate(async () => {
        await expireSilence(id);
        update((cur) => ({ ...cur, silences: cur.silences.filter((s) => s.id !== id) }));
      }),
    error: action.error?.message ?? null,
  };
}
