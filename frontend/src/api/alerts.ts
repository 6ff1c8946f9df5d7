// Alerts for the whole app: one `/api/live?events=alert` stream shared by every component, the
// initial list from /api/alerts, browser notifications, and the operator's actions (ack, silence).
import { useSyncExternalStore } from 'react';
import { mutate } from './auth';
import { getJson } from './client';
import type { components } from './schema.gen';
import { openStream, streamsSupported, type EventStream } from './stream';
import type { Alert, AlertEvent, AlertsResponse, Delivery, Silence } from './types';

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

let state: AlertsState = { active: new Map(), silences: [], loaded: false, error: null, streamOpen: false };
const listeners = new Set<() => void>();
let stream: EventStream | null = null;
let timer: number | null = null;

function set(next: Partial<AlertsState>): void {
  state = { ...state, ...next };
  for (const l of listeners) l();
}

/** Fold one alert change into the active map. Exported for tests. */
export function applyAlertEvent(active: Map<string, Alert>, ev: AlertEvent): Map<string, Alert> {
  const next = new Map(active);
  if (ev.alert.status === 'resolved') next.delete(ev.alert.fingerprint);
  else next.set(ev.alert.fingerprint, ev.alert);
  return next;
}

export function parseAlertEvent(data: string): AlertEvent | null {
  try {
    const ev = JSON.parse(data) as AlertEvent;
    if (!ev || typeof ev !== 'object' || !ev.alert || typeof ev.alert.fingerprint !== 'string') return null;
    return ev;
  } catch {
    return null;
  }
}

export function notificationsSupported(): boolean {
  return typeof window !== 'undefined' && 'Notification' in window;
}

/** Desktop notification for a new firing alert, when the user allowed them and it is not silenced. */
function notify(ev: AlertEvent): void {
  if (ev.transition !== 'firing' || ev.alert.silenced_by !== null || !notificationsSupported()) return;
  if (Notification.permission !== 'granted') return;
  try {
    const n = new Notification(`${ev.alert.severity === 'critical' ? '🔴' : '🟠'} ${ev.alert.summary}`, {
      body: ev.alert.description,
      tag: ev.alert.fingerprint,
    });
    n.addEventListener('click', () => {
      window.focus();
      window.location.assign('/alerts');
    });
  } catch {
    // Some browsers only allow notifications from a service worker: the banner still shows it.
  }
}

export async function refreshAlerts(): Promise<void> {
  try {
    const res = await getJson<AlertsResponse>('/api/alerts');
    set({ active: new Map(res.active.map((a) => [a.fingerprint, a])), silences: res.silences, loaded: true, error: null });
  } catch (e) {
    set({ error: e instanceof Error ? e.message : String(e) });
  }
}

function start(): void {
  void refreshAlerts();
  timer = window.setInterval(() => void refreshAlerts(), ALERTS_REFRESH_MS);
  if (!streamsSupported()) return;
  stream = openStream('/api/live?events=alert');
  stream.addEventListener('open', () => {
    set({ streamOpen: true });
    // Changes made while the stream was down are not replayed: fetch the current list.
    void refreshAlerts();
  });
  stream.addEventListener('error', () => set({ streamOpen: false }));
  stream.addEventListener('alert', (msg) => {
    const ev = parseAlertEvent((msg as MessageEvent<string>).data);
    if (!ev) return;
    set({ active: applyAlertEvent(state.active, ev) });
    notify(ev);
  });
}

function stop(): void {
  stream?.close();
  stream = null;
  if (timer !== null) window.clearInterval(timer);
  timer = null;
}

function subscribe(cb: () => void): () => void {
  listeners.add(cb);
  if (listeners.size === 1) start();
  return () => {
    listeners.delete(cb);
    if (listeners.size === 0) stop();
  };
}

/** Current alerts, live; the first subscriber opens the stream, the last one closes it. */
export function useAlerts(): AlertsState {
  return useSyncExternalStore(
    subscribe,
    () => state,
    () => state,
  );
}

const rank = (a: Alert) => (a.status === 'firing' ? 0 : 1) * 2 + (a.severity === 'critical' ? 0 : 1);

/** Firing before pending, critical before warning, newest first. */
export function sortAlerts(alerts: Iterable<Alert>): Alert[] {
  return [...alerts].toSorted((a, b) => rank(a) - rank(b) || (b.fired_at ?? b.started_at) - (a.fired_at ?? a.started_at));
}

export function acknowledge(id: number): Promise<Alert> {
  return mutate<Alert>(`/api/alerts/${id}/ack`, 'POST');
}

export type SilenceRequest = components['schemas']['SilenceIn'];

export function addSilence(body: SilenceRequest): Promise<Silence> {
  return mutate<Silence>('/api/alerts/silences', 'POST', body);
}

export function expireSilence(id: number): Promise<Silence> {
  return mutate<Silence>(`/api/alerts/silences/${id}`, 'DELETE');
}

export function fetchAlertHistory(signal?: AbortSignal): Promise<Alert[]> {
  return getJson<Alert[]>('/api/alerts/history?limit=100', signal);
}

export function fetchDeliveries(signal?: AbortSignal): Promise<Delivery[]> {
  return getJson<Delivery[]>('/api/alerts/deliveries?limit=100', signal);
}

/** Tests only. */
export function resetAlertsForTests(): void {
  stop();
  listeners.clear();
  state = { active: new Map(), silences: [], loaded: false, error: null, streamOpen: false };
}
