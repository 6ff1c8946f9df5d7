// Alerts for the whole app: the current list (a query the alert feed keeps up to date), their order,
// and the operator's actions (ack, silence).
import { useQuery } from '@tanstack/react-query';
import { del, post } from './http';
import { useAlertFeed } from './live';
import { currentAlertsQuery } from './queries';
import type { components } from './schema.gen';
import type { Alert, Silence } from './types';
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

const rank = (a: Alert) => (a.status === 'firing' ? 0 : 1) * 2 + (a.severity === 'critical' ? 0 : 1);

/** Firing before pending, critical before warning, newest first. */
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
