import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, detailFromBody } from './client';
import { get } from './http';
import { resetSessionForTests } from './session';
import { asRequest, stubFetch } from '../test/fakes';

afterEach(() => vi.unstubAllGlobals());

function answer(status: number, body: string) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async () => new Response(body, { status, statusText: 'X' })),
  );
}

const target = (name: string) => get('/api/targets/{name}', { params: { path: { name } } });

describe('api client', () => {
  it('surfaces the backend detail message with its status', async () => {
    answer(404, JSON.stringify({ detail: "unknown target 'x'" }));
    const err = await target('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe("unknown target 'x'");
    expect((err as ApiError).kind).toBe('not_found');
    expect((err as ApiError).status).toBe(404);
  });

  it('classifies 503 as not ready', async () => {
    answer(503, JSON.stringify({ detail: 'no poll yet for sandbox' }));
    const err = (await target('sandbox').catch((e: unknown) => e)) as ApiError;
    expect(err.kind).toBe('not_ready');
    expect(err.message).toBe('no poll yet for sandbox');
  });

  it('treats a network failure or a bodyless proxy 502 as backend unreachable', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    const e1 = (await target('a').catch((e: unknown) => e)) as ApiError;
    expect(e1.kind).toBe('unreachable');
    expect(e1.message).toContain('No answer from the Poolscope API');
    answer(502, '');
    const e2 = (await target('a').catch((e: unknown) => e)) as ApiError;
    expect(e2.kind).toBe('unreachable');
  });

  it('flattens FastAPI 422 validation details', () => {
    expect(detailFromBody({ detail: [{ loc: ['query', 'points'], msg: 'too large' }] })).toBe('query.points: too large');
    expect(detailFromBody('nope')).toBeNull();
  });

  it('sends reads with the session token, no cookie, and repeated metric params', async () => {
    resetSessionForTests('v3.tok.sig');
    const fn = stubFetch({ '/api/targets/my%20db/metrics': () => ({ body: { series: [] } }) });
    await get('/api/targets/{name}/metrics', {
      params: { path: { name: 'my db' }, query: { metric: ['qps', 'tps'], from: 10, to: 21, points: 600 } },
    });
    const sent = asRequest(fn.mock.calls[0]);
    const url = new URL(sent.url);
    expect(url.pathname + url.search).toBe('/api/targets/my%20db/metrics?metric=qps&metric=tps&from=10&to=21&points=600');
    expect(sent.headers.get('authorization')).toBe('Bearer v3.tok.sig');
    expect(sent.credentials).toBe('omit');
  });
});
