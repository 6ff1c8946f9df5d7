// The last polls of each target the live feed delivered, for a live history whose fetch was in flight.
import type { PollEvent } from './types';

/** Per target: enough for the live window at one poll a second. */
const KEEP = 600;

const recent = new Map<string, PollEvent[]>();

export function keepPoll(ev: PollEvent): void {
  const kept = recent.get(ev.target) ?? [];
  kept.push(ev);
  if (kept.length > KEEP) kept.splice(0, kept.length - KEEP);
  recent.set(ev.target, kept);
}

export function recentPolls(target: string): readonly PollEvent[] {
  return recent.get(target) ?? [];
}

/** Tests only. */
export function forgetPolls(): void {
  recent.clear();
}
