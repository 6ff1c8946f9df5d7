import { afterEach, describe, expect, it, vi } from 'vitest';
import { resetSessionForTests } from './session';
import { LiveStream, SseParser } from './stream';

afterEach(() => vi.unstubAllGlobals());

describe('live stream', () => {
  it('parses frames split anywhere, with comments, CRLF and multi-line data', () => {
    const frames: [string, string][] = [];
    const parser = new SseParser((name, data) => frames.push([name, data]));
    for (const chunk of [
      ': connected\n\nevent: po',
      'll\ndata: {"a":1}\n',
      '\nevent: alert\r\ndata: x\r\ndata: y\r\n\r\ndata: plain\n\n',
    ])
      parser.push(chunk);
    expect(frames).toEqual([
      ['poll', '{"a":1}'],
      ['alert', 'x\ny'],
      ['message', 'plain'],
    ]);
  });

  it('reads /api/live with the session token and delivers events until closed', async () => {
    resetSessionForTests('v3.tok.sig');
    const encoder = new TextEncoder();
    let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    const push = (text: string) => controller?.enqueue(encoder.encode(text));
    const fetchMock = vi.fn<(url: string, init?: RequestInit) => Promise<Response>>(
      async () => new Response(body, { headers: { 'Content-Type': 'text/event-stream' } }),
    );
    vi.stubGlobal('fetch', fetchMock);
    const stream = new LiveStream('/api/live?events=alert');
    const seen: string[] = [];
    stream.addEventListener('open', () => seen.push('open'));
    stream.addEventListener('alert', (ev) => seen.push((ev as MessageEvent<string>).data));
    await vi.waitFor(() => expect(seen).toEqual(['open']));
    push('event: alert\ndata: {"x":1}\n\n');
    await vi.waitFor(() => expect(seen).toEqual(['open', '{"x":1}']));
    const sent = fetchMock.mock.calls[0][0] as unknown as Request;
    expect(sent.headers.get('authorization')).toBe('Bearer v3.tok.sig');
    expect(sent.credentials).toBe('omit');
    stream.close();
    push('event: alert\ndata: late\n\n');
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual(['open', '{"x":1}']);
  });
});
