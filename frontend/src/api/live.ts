// The /api/live channel into the query cache: each poll event replaces its target's info and state
// and extends its live history; each alert change updates the alert list. One stream per URL, shared
// by every component that asks for it, closed when the last one goes.
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useSyncExternalStore } from 'react';
import { liveUrl } from './client';
import { applyPolls, type History } from './history';
import { keys } from './queries';
import { forgetPolls, keepPoll } from './recent';
import { openStream, streamsSupported, type EventStream } from './stream';
import type { Alert, AlertEvent, AlertsResponse, PollEvent, Target } from './types';
import { getPrefs, usePrefs } from '../lib/prefs';

/** How long the stream may stay unopened before the pages fall back to refetching. */
export const CONNECT_TIMEOUT_MS = 10000;

export type LiveStatus = 'connecting' | 'open' | 'error' | 'unsupported' | 'paused';

export function parsePollEvent(data: string): PollEvent | null {
  try {
    const ev = JSON.parse(data) as PollEvent;
    if (!ev || typeof ev !== 'object' || typeof ev.target !== 'string' || typeof ev.ts !== 'number') return null;
    if (!Array.isArray(ev.samples)) ev.samples = [];
    return ev;
  } catch {
    return null;
  }
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

/** Replace (or add) one target in the list, keeping the list order stable. */
export function upsertTarget(list: Target[] | undefined, t: Target): Target[] {
  if (!list) return [t];
  const i = list.findIndex((x) => x.name === t.name);
  if (i < 0) return [...list, t];
  const out = list.slice();
  out[i] = t;
  return out;
}

/**
 * Fold one alert change into the current alerts: resolved ones leave, the others are replaced. An
 * acknowledgement is never taken back (as in the store): a change sent by a process that has not
 * heard of it yet (a poller, while an API process took the ack) keeps it.
 */
export function applyAlertEvent(current: AlertsResponse, ev: AlertEvent): AlertsResponse {
  const before = current.active.find((a) => a.fingerprint === ev.alert.fingerprint);
  const active: Alert[] = current.active.filter((a) => a !== before);
  if (ev.alert.status === 'resolved') return { ...current, active };
  const keepAck = before?.acked_by && !ev.alert.acked_by && before.fired_at === ev.alert.fired_at;
  active.push(keepAck ? { ...ev.alert, acked_by: before.acked_by, acked_at: before.acked_at } : ev.alert);
  return { ...current, active };
}

/** Whether the silences known here no longer tell who silenced an alert and until when (another browser made or ended one). */
function silencesBehind(current: AlertsResponse | undefined, ev: AlertEvent): boolean {
  if (ev.transition === 'unsilenced') return true;
  const id = ev.alert.silenced_by;
  return id !== null && !(current?.silences ?? []).some((s) => s.id === id);
}

export function applyPoll(qc: QueryClient, ev: PollEvent): void {
  keepPoll(ev);
  if (ev.target_info) {
    qc.setQueryData(keys.targetInfo(ev.target), ev.target_info);
    qc.setQueryData<Target[]>(keys.targets, (list) => (list ? upsertTarget(list, ev.target_info!) : list));
  }
  if (ev.state) qc.setQueryData(keys.state(ev.target), ev.state);
  qc.setQueriesData<History>({ queryKey: keys.liveHistory(ev.target) }, (h) => (h ? applyPolls(h, [ev]) : h));
}

// When this page was opened (epoch s): an alert that fired before is not news to its viewer.
const openedAt = Date.now() / 1000;
// The firings notified here (fingerprint and firing time): a firing is notified once, whether the
// stream told it or the list fetched when the stream (re)opened did.
const notified = new Set<string>();

/** Desktop notification for an alert that fired, when the user allowed them and it is not silenced. */
function notify(alert: Alert): void {
  if (alert.silenced_by !== null || !notificationsSupported()) return;
  if (Notification.permission !== 'granted') return;
  const key = `${alert.fingerprint}@${alert.fired_at ?? alert.started_at}`;
  if (notified.has(key)) return;
  notified.add(key);
  try {
    const n = new Notification(`${alert.severity === 'critical' ? '🔴' : '🟠'} ${alert.summary}`, {
      body: alert.description,
      tag: alert.fingerprint,
    });
    n.addEventListener('click', () => {
      window.focus();
      window.location.assign('/alerts');
    });
  } catch {
    // Some browsers only allow notifications from a service worker: the banner still shows it.
  }
}

function notifyMissed(qc: QueryClient): void {
  for (const alert of qc.getQueryData<AlertsResponse>(keys.current)?.active ?? []) {
    if (alert.status === 'firing' && (alert.fired_at ?? 0) >= openedAt) notify(alert);
  }
}

export function notificationsSupported(): boolean {
  return typeof window !== 'undefined' && 'Notification' in window;
}

export function applyAlert(qc: QueryClient, ev: AlertEvent): void {
  const current = qc.getQueryData<AlertsResponse>(keys.current);
  // Before the first list arrives a change has nothing to apply to: that list, fetched now, holds
  // it; so does the list after a silence made or ended elsewhere (it names who and until when).
  if (current === undefined || silencesBehind(current, ev)) void qc.invalidateQueries({ queryKey: keys.current });
  qc.setQueryData<AlertsResponse>(keys.current, (cur) => (cur ? applyAlertEvent(cur, ev) : cur));
  // The logs and the target's bands change with it: fetched again when shown.
  void qc.invalidateQueries({ queryKey: keys.alertHistory });
  void qc.invalidateQueries({ queryKey: ['target', ev.alert.target, 'alert-spans'] });
  if (ev.transition === 'firing') notify(ev.alert);
}

type Status = Exclude<LiveStatus, 'paused'>;

interface Feed {
  stream: EventStream | null;
  status: Status;
  /** Components keeping it open. */
  users: number;
  timer: number | null;
}

const feeds = new Map<string, Feed>();
/** Who watches a URL's status, whether or not its stream is open yet. */
const watchers = new Map<string, Set<() => void>>();

const initialStatus = (): Status => (streamsSupported() ? 'connecting' : 'unsupported');

function setStatus(url: string, feed: Feed, status: Status): void {
  if (feed.status === status) return;
  feed.status = status;
  for (const w of watchers.get(url) ?? []) w();
}

function open(url: string, qc: QueryClient): Feed {
  const feed: Feed = { stream: null, status: initialStatus(), users: 0, timer: null };
  feeds.set(url, feed);
  if (!streamsSupported()) return feed;
  const es = openStream(url);
  feed.stream = es;
  // A proxy that swallows the stream leaves it "connecting" forever: say it failed, so pages refetch.
  feed.timer = window.setTimeout(() => feed.status === 'connecting' && setStatus(url, feed, 'error'), CONNECT_TIMEOUT_MS);
  es.addEventListener('open', () => {
    setStatus(url, feed, 'open');
    // Changes made while the stream was down are not replayed: fetch the current alerts, and
    // notify the firings among them that came after this page opened (before the stream first
    // connected, or while it reconnected).
    if (url.includes('events=alert')) void qc.invalidateQueries({ queryKey: keys.current }).then(() => notifyMissed(qc));
  });
  // The stream reconnects by itself after an error; pages refetch meanwhile.
  es.addEventListener('error', () => setStatus(url, feed, 'error'));
  es.addEventListener('poll', (msg) => {
    const ev = parsePollEvent((msg as MessageEvent<string>).data);
    if (!ev) return;
    setStatus(url, feed, 'open');
    if (!getPrefs().paused) applyPoll(qc, ev);
  });
  es.addEventListener('alert', (msg) => {
    const ev = parseAlertEvent((msg as MessageEvent<string>).data);
    if (ev) applyAlert(qc, ev);
  });
  return feed;
}

function release(url: string, feed: Feed): void {
  feed.users -= 1;
  if (feed.users > 0) return;
  feed.stream?.close();
  if (feed.timer !== null) window.clearTimeout(feed.timer);
  feeds.delete(url);
}

function watch(url: string, cb: () => void): () => void {
  const set = watchers.get(url) ?? new Set();
  set.add(cb);
  watchers.set(url, set);
  return () => {
    set.delete(cb);
    if (!set.size) watchers.delete(url);
  };
}

/** Keep the stream of `url` open while mounted; its status, or 'paused' while the viewer paused. */
function useFeed(url: string): LiveStatus {
  const qc = useQueryClient();
  const { paused } = usePrefs();
  useEffect(() => {
    const feed = feeds.get(url) ?? open(url, qc);
    feed.users += 1;
    for (const w of watchers.get(url) ?? []) w();
    return () => release(url, feed);
  }, [url, qc]);
  const status = useSyncExternalStore(
    useCallback((cb: () => void) => watch(url, cb), [url]),
    () => feeds.get(url)?.status ?? initialStatus(),
  );
  return paused ? 'paused' : status;
}

/** Poll events of one target (or of all) into the cache while mounted. */
export function useLiveFeed(target?: string): LiveStatus {
  return useFeed(liveUrl(target));
}

/** Alert changes into the cache (and desktop notifications) while mounted. */
export function useAlertFeed(): LiveStatus {
  return useFeed('/api/live?events=alert');
}

/** Whether pages fall back to refetching: the stream is not open (paused pages fetch nothing). */
export function streamDown(status: LiveStatus): boolean {
  return status === 'error' || status === 'unsupported';
}

/** Tests only: forget every stream and the polls kept. */
export function resetLiveForTests(): void {
  for (const f of feeds.values()) {
    f.stream?.close();
    if (f.timer !== null) window.clearTimeout(f.timer);
  }
  feeds.clear();
  watchers.clear();
  notified.clear();
  forgetPolls();
}
