// The /api/live SSE channel: a hook that delivers parsed `poll` events and reports connection health.
import { useEffect, useRef, useState } from 'react';
import { liveUrl } from './client';
import { openStream, streamsSupported } from './stream';
import type { PollEvent } from './types';

/** How long the stream may stay unopened before callers fall back to polling. */
export const CONNECT_TIMEOUT_MS = 10000;

export type LiveStatus = 'connecting' | 'open' | 'error' | 'unsupported';

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

/**
 * Subscribe to poll events. `target` filters server-side; `undefined` means all targets.
 * The handler may change identity each render; only `target` reopens the stream (callers remount per target).
 */
export function useLiveChannel(target: string | undefined, onPoll: (ev: PollEvent) => void): LiveStatus {
  const handler = useRef(onPoll);
  useEffect(() => {
    handler.current = onPoll;
  });
  const [status, setStatus] = useState<LiveStatus>(() => (streamsSupported() ? 'connecting' : 'unsupported'));

  useEffect(() => {
    if (!streamsSupported()) return;
    const es = openStream(liveUrl(target));
    // A proxy that swallows the stream leaves it "connecting" forever; treat that as failed so callers poll.
    const timer = window.setTimeout(() => setStatus((s) => (s === 'connecting' ? 'error' : s)), CONNECT_TIMEOUT_MS);
    es.addEventListener('open', () => setStatus('open'));
    // The stream reconnects by itself after an error; callers fall back to polling meanwhile.
    es.addEventListener('error', () => setStatus('error'));
    es.addEventListener('poll', (msg) => {
      const ev = parsePollEvent((msg as MessageEvent<string>).data);
      if (!ev) return;
      setStatus('open');
      handler.current(ev);
    });
    return () => {
      window.clearTimeout(timer);
      es.close();
    };
  }, [target]);

  return status;
}
