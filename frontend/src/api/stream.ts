// Server-Sent Events over fetch, so the stream carries the session header (an EventSource cannot send
// one, and a cookie would reach every port of the host: docs/decisions/0200-origin-bound-sessions.md).
// It behaves like an EventSource: `open`, `error` (then it reconnects by itself), one event per frame.
import { apiFetch } from './client';

/** Wait before reconnecting; doubles after each failure up to the maximum. */
export const RETRY_MS = 2000;
export const MAX_RETRY_MS = 30000;

export interface EventStream {
  addEventListener(type: string, fn: (ev: Event) => void): void;
  close(): void;
}

/** The frames of an SSE body: `event:` names it (default `message`), `data:` lines join with \n. */
export class SseParser {
  private buffer = '';
  private name = '';
  private data: string[] = [];

  constructor(private readonly dispatch: (name: string, data: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer.startsWith('\r\n', end) ? 2 : 1));
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length) this.dispatch(this.name || 'message', this.data.join('\n'));
      this.name = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return; // a comment: the server's keep-alive
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.name = value;
    else if (field === 'data') this.data.push(value);
  }
}

export class LiveStream implements EventStream {
  private readonly listeners = new Map<string, Set<(ev: Event) => void>>();
  private readonly abort = new AbortController();

  constructor(readonly url: string) {
    void this.run();
  }

  addEventListener(type: string, fn: (ev: Event) => void): void {
    const set = this.listeners.get(type) ?? new Set();
    set.add(fn);
    this.listeners.set(type, set);
  }

  close(): void {
    this.abort.abort();
  }

  private emit(ev: Event): void {
    if (this.abort.signal.aborted) return;
    for (const fn of this.listeners.get(ev.type) ?? []) fn(ev);
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    let wait = RETRY_MS;
    while (!signal.aborted) {
      try {
        const res = await apiFetch(this.url, { signal, headers: { Accept: 'text/event-stream' } });
        if (res.ok && res.body) {
          this.emit(new Event('open'));
          wait = RETRY_MS;
          await this.read(res.body, signal);
        } else {
          await res.body?.cancel();
        }
      } catch {
        // unreachable, cut off or closed: reported below, then tried again
      }
      if (signal.aborted) return;
      this.emit(new Event('error'));
      await new Promise<void>((resolve) => {
        const timer = window.setTimeout(resolve, wait);
        signal.addEventListener('abort', () => (window.clearTimeout(timer), resolve()), { once: true });
      });
      wait = Math.min(wait * 2, MAX_RETRY_MS);
    }
  }

  private async read(body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser((name, data) => this.emit(new MessageEvent(name, { data })));
    try {
      while (!signal.aborted) {
        const { done, value } = await reader.read();
        if (done) return;
        parser.push(decoder.decode(value, { stream: true }));
      }
    } finally {
      reader.releaseLock();
    }
  }
}

export function streamsSupported(): boolean {
  return typeof ReadableStream !== 'undefined' && typeof TextDecoder !== 'undefined';
}

let open: (url: string) => EventStream = (url) => new LiveStream(url);

/** A live stream of `url` (one of /api/live's); tests replace the opener (test/fakes.ts). */
export function openStream(url: string): EventStream {
  return open(url);
}

/** Tests only: open streams with `opener` instead (null: the real LiveStream). */
export function setStreamOpenerForTests(opener: ((url: string) => EventStream) | null): void {
  open = opener ?? ((url) => new LiveStream(url));
}
