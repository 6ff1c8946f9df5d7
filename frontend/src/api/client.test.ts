import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, detailFromBody, fetchTarget, metricsUrl } from './client';

afterEach(() => vi.unstubAllGlobals());

function stubFetch(status: number, body: string) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async () => new Response(body, { status, statusText: 'X' })),
  );
}

describe('api client', () => {
  it('surfaces the backend detail message with its status', async () => {
    stubFetch(404, JSON.stringify({ detail: "unknown target 'x'" }));
    const err = await fetchTarget('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe("unknown target 'x'");
    expect((err as ApiError).kind).toBe('not_found');
    expect((err as ApiError).status).toBe(404);
  });

  it('classifies 503 as not ready', async () => {
    stubFetch(503, JSON.stringify({ detail: 'no poll yet for sandbox' }));
    const err = (await fetchTarget('sandbox').catch((e: unknown) => e)) as ApiError;
    expect(err.kind).toBe('not_ready');
    expect(err.message).toBe('no poll yet for sandbox');
  });

  it('treats a network failure or a bodyless proxy 502 as backend unreachable', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    const e1 = (await fetchTarget('a').catch((e: unknown) => e)) as ApiError;
    expect(e1.kind).toBe('unreachable');
    expect(e1.message).toContain('No answer from the Poolscope API');
    stubFetch(502, '');
    const e2 = (await fetchTarget('a').catch((e: unknown) => e)) as ApiError;
    expect(e2.kind).toBe('unreachable');
  });

  it('flattens FastAPI 422 validation details', () => {
    expect(detailFromBody({ detail: [{ loc: ['query', 'points'], msg: 'too large' }] })).toBe('query.points: too large');
    expect(detailFromBody('nope')).toBeNull();
  });

  it('builds metrics URLs with repeated metric params and clamped points', () => {
    const url = metricsUrl('my db', { metrics: ['qps', 'tps'], from: 10.7, to: 20.2, points: 99999 });
    expect(url).toBe('/api/targets/my%20db/metrics?metric=qps&metric=tps&from=10&to=21&points=5000');
  });
});
