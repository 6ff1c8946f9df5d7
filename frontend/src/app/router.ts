// Minimal history-API routing (no router library): parse the path, navigate with pushState, re-render on popstate.
import { useSyncExternalStore } from 'react';

export type Route =
  | { page: 'overview' }
  | { page: 'target'; name: string }
  | { page: 'login' }
  | { page: 'alerts' }
  | { page: 'snapshots' }
  | { page: 'snapshot'; id: number }
  | { page: 'notfound'; path: string };

export function parseRoute(pathname: string): Route {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/') return { page: 'overview' };
  if (path === '/login') return { page: 'login' };
  if (path === '/alerts') return { page: 'alerts' };
  if (path === '/snapshots') return { page: 'snapshots' };
  const snap = /^\/snapshots\/(\d{1,12})$/.exec(path);
  if (snap) return { page: 'snapshot', id: Number(snap[1]) };
  const m = /^\/targets\/([^/]+)$/.exec(path);
  if (m) {
    try {
      return { page: 'target', name: decodeURIComponent(m[1]) };
    } catch {
      return { page: 'notfound', path };
    }
  }
  return { page: 'notfound', path };
}

export function targetPath(name: string): string {
  return `/targets/${encodeURIComponent(name)}`;
}

const NAV_EVENT = 'poolscope:navigate';

function subscribe(cb: () => void): () => void {
  window.addEventListener('popstate', cb);
  window.addEventListener(NAV_EVENT, cb);
  return () => {
    window.removeEventListener('popstate', cb);
    window.removeEventListener(NAV_EVENT, cb);
  };
}

const getHref = () => window.location.pathname + window.location.search;

/** Current path + query; components re-render on navigation and back/forward. */
export function useLocation(): { pathname: string; search: string } {
  const href = useSyncExternalStore(subscribe, getHref, getHref);
  const i = href.indexOf('?');
  return i < 0 ? { pathname: href, search: '' } : { pathname: href.slice(0, i), search: href.slice(i) };
}

/** Go to `url` (path and/or query). `replace` avoids a history entry (e.g. for normalising the URL). */
export function navigate(url: string, replace = false): void {
  if (url === getHref()) return;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(NAV_EVENT));
}

/** Where to go after logging in: `?next=` when it is a path on this site, else the overview. */
export function loginNext(search: string): string {
  const next = new URLSearchParams(search).get('next');
  // Only same-site paths: "//evil.example" or "https://..." would be an open redirect.
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}
