// Test doubles for the network: a URL-routed fetch stub and a controllable live stream.
import { vi } from 'vitest';
import { setStreamOpenerForTests } from '../api/stream';

export type Routes = Record<
  string,
  (url: URL, request: Request) => { status?: number; body: unknown; headers?: Record<string, string> }
>;

type FetchArgs = [input: RequestInfo | URL, init?: RequestInit];

/** One call of the stubbed fetch as a Request (the app sends Requests; a bare URL and init become one). */
export function asRequest([input, init]: FetchArgs): Request {
  return input instanceof Request ? input : new Request(new URL(String(input), 'http://localhost'), init);
}

/** The URLs the stubbed fetch was called with, in order. */
export function calledUrls(fn: { mock: { calls: FetchArgs[] } }): URL[] {
  return fn.mock.calls.map((c) => new URL(asRequest(c).url));
}

/** Stub fetch; the first route whose key is a prefix of the path (+query) answers. Unmatched → 404. */
export function stubFetch(routes: Routes) {
  const fn = vi.fn<(...args: FetchArgs) => Promise<Response>>(async (...args) => {
    const request = asRequest(args);
    const url = new URL(request.url);
    const path = url.pathname + url.search;
    const key = Object.keys(routes)
      .toSorted((a, b) => b.length - a.length)
      .find((k) => path === k || path.startsWith(k.endsWith('?') ? k : `${k}?`) || path === k.replace(/\?$/, ''));
    if (!key) return new Response(JSON.stringify({ detail: `no route for ${path}` }), { status: 404 });
    const { status = 200, body, headers = {} } = routes[key](url, request);
    return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
  });
  vi.stubGlobal('fetch', fn);
  return fn;
}

export class FakeEventSource {
  static instances: FakeEventSource[] = [];
  readonly url: string;
  closed = false;
  private listeners = new Map<string, ((ev: Event) => void)[]>();

  constructor(url: string) {
    this.url = url;
    FakeEventSource.instances.push(this);
  }

  addEventListener(type: string, fn: (ev: Event) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }

  close() {
    this.closed = true;
  }

  emit(type: string, data?: unknown) {
    const ev = type === 'poll' || data !== undefined ? new MessageEvent(type, { data: JSON.stringify(data) }) : new Event(type);
    for (const fn of this.listeners.get(type) ?? []) fn(ev);
  }

  static latest(): FakeEventSource {
    const es = FakeEventSource.instances.at(-1);
    if (!es) throw new Error('no EventSource opened');
    return es;
  }
}

/** Live streams (api/stream.ts) open as FakeEventSource until the next call of this. */
export function installEventSource() {
  FakeEventSource.instances = [];
  setStreamOpenerForTests((url) => new FakeEventSource(url));
}
