// The viewer's choices that hold on every page: time zone, theme, refresh interval and pause.
// Kept in localStorage (pause aside: a reload always shows live data again), read with usePrefs().
import { useSyncExternalStore } from 'react';

export type TimeZoneChoice = 'local' | 'utc';
export type ThemeChoice = 'system' | 'light' | 'dark';
/** Seconds between refreshes of the polled data, or 'auto': each view's own cadence. */
export type RefreshChoice = 'auto' | 5 | 10 | 30 | 60;

export const REFRESH_CHOICES: readonly RefreshChoice[] = ['auto', 5, 10, 30, 60];

export interface Prefs {
  tz: TimeZoneChoice;
  theme: ThemeChoice;
  refresh: RefreshChoice;
  /** Nothing is fetched and the live feed is not applied: the page holds still. */
  paused: boolean;
}

const KEY = 'poolscope.prefs';
const DEFAULTS: Prefs = { tz: 'local', theme: 'system', refresh: 'auto', paused: false };

function load(): Prefs {
  try {
    const raw = JSON.parse(localStorage.getItem(KEY) ?? '{}') as Partial<Prefs>;
    return {
      tz: raw.tz === 'utc' ? 'utc' : 'local',
      theme: raw.theme === 'light' || raw.theme === 'dark' ? raw.theme : 'system',
      refresh: REFRESH_CHOICES.includes(raw.refresh as RefreshChoice) ? (raw.refresh as RefreshChoice) : 'auto',
      paused: false,
    };
  } catch {
    return DEFAULTS;
  }
}

let prefs: Prefs = load();
const listeners = new Set<() => void>();

export function getPrefs(): Prefs {
  return prefs;
}

export function setPrefs(next: Partial<Prefs>): void {
  prefs = { ...prefs, ...next };
  try {
    const { paused: _paused, ...kept } = prefs;
    localStorage.setItem(KEY, JSON.stringify(kept));
  } catch {
    // storage disabled: the choice lasts as long as the page
  }
  for (const l of listeners) l();
}

export function subscribePrefs(cb: () => void): () => void {
  listeners.add(cb);
  return () => listeners.delete(cb);
}

export function usePrefs(): Prefs {
  return useSyncExternalStore(subscribePrefs, getPrefs, getPrefs);
}

/**
 * How often a view's polled data refreshes: its own cadence (`ownMs`) unless the viewer chose one,
 * never while paused (TanStack Query's refetchInterval).
 */
export function refreshEvery(p: Prefs, ownMs: number): number | false {
  if (p.paused) return false;
  return p.refresh === 'auto' ? ownMs : p.refresh * 1000;
}

/** Tests only: back to the defaults, nothing stored. */
export function resetPrefsForTests(next: Partial<Prefs> = {}): void {
  try {
    localStorage.removeItem(KEY);
  } catch {
    // nothing stored
  }
  prefs = { ...DEFAULTS, ...next };
}
