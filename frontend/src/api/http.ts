// The typed API client: openapi-fetch over the paths generated from the backend's OpenAPI document
// (schema.gen.ts), carrying the session header by the same `authorize` as every other request.
import createClient, { type MaybeOptionalInit } from 'openapi-fetch';
import { authorize, failure, send } from './client';
import type { paths } from './schema.gen';

const api = createClient<paths>({
  // Absolute, so a Request can be built outside a page too (tests); the API is always same-origin.
  baseUrl: typeof window === 'undefined' ? '' : window.location.origin,
  credentials: 'omit',
  cache: 'no-store',
  // Looked up at each call, not captured once: a test replaces the global fetch.
  fetch: (request) => send(request),
});

api.use({
  async onRequest({ request }) {
    await authorize(request.headers);
    return request;
  },
});

type Method = 'get' | 'post' | 'delete';
type PathsWith<M extends Method> = { [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never }[keyof paths];
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The call's options (path, query, body, signal), required when the path has parameters. */
type Args<P extends keyof paths, M extends Method> =
  RequiredKeys<MaybeOptionalInit<paths[P], M>> extends never
    ? [init?: MaybeOptionalInit<paths[P], M>]
    : [init: MaybeOptionalInit<paths[P], M>];
/**
 * The JSON an operation answers on success, as the schema declares it (openapi-fetch's own result
 * type turns tuples such as a point's [t, v] into plain arrays).
 */
type Json<O> = O extends { responses: { 200: { content: { 'application/json': infer J } } } }
  ? J
  : O extends { responses: { 201: { content: { 'application/json': infer J } } } }
    ? J
    : unknown;
export type Answer<P extends keyof paths, M extends Method> = Json<paths[P][M]>;

interface Raw {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** `read`: a refused GET means this backend needs a login to read; a refused change, that the session is gone. */
async function settle<T>(call: Promise<Raw>, read: boolean): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw failure(response, error, read);
  return data as T;
}

// openapi-fetch's methods are generic over its own path union: called here with ours, checked above.
type Loose = (path: never, init: never) => Promise<Raw>;
const loose = api as unknown as Record<'GET' | 'POST' | 'DELETE', Loose>;

/** A read's answer, or an ApiError with the backend's `detail`. */
export function get<P extends PathsWith<'get'>>(path: P, ...init: Args<P, 'get'>): Promise<Answer<P, 'get'>> {
  return settle(loose.GET(path as never, init[0] as never), true);
}

/** A change's answer, or an ApiError with the backend's `detail`. */
export function post<P extends PathsWith<'post'>>(path: P, ...init: Args<P, 'post'>): Promise<Answer<P, 'post'>> {
  return settle(loose.POST(path as never, init[0] as never), false);
}

export function del<P extends PathsWith<'delete'>>(path: P, ...init: Args<P, 'delete'>): Promise<Answer<P, 'delete'>> {
  return settle(loose.DELETE(path as never, init[0] as never), false);
}

/** The raw answer of a read, for the few callers that need its headers (who is logged in). */
export function getRaw<P extends PathsWith<'get'>>(path: P, ...init: Args<P, 'get'>): Promise<Raw> {
  return loose.GET(path as never, init[0] as never);
}

/** The raw answer of a change, for one that is not the session's to judge (a login attempt). */
export function postRaw<P extends PathsWith<'post'>>(path: P, ...init: Args<P, 'post'>): Promise<Raw> {
  return loose.POST(path as never, init[0] as never);
}
