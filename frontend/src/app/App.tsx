// App shell: header with navigation, the alert banner (every page) and the route switch.
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { Suspense, useEffect, useState } from 'react';
import { useAuth } from '../api/auth';
import { makeQueryClient } from '../api/queries';
import { AlertBanner } from '../features/alerts/AlertBanner';
import { LoginForm, UserMenu } from '../features/auth/LoginForm';
import { OverviewPage } from '../features/overview/OverviewPage';
import { StoreBanner } from '../features/store/StoreBanner';
import { TopbarCapture } from '../features/snapshots/CaptureSnapshot';
import { Link, Notice } from '../ui/ui';
import { usePrefs, type ThemeChoice } from '../lib/prefs';
import { Footer } from './Footer';
import { lazyPage, PageLoading } from './lazyPage';
import { loginNext, parseRoute, useLocation, type Route } from './router';
import { ViewControls } from './ViewControls';

// The overview and target pages are in the first-load bundle; the others load on first visit.
// The target page carries the charts (Recharts): fetched on first visit, so the overview loads light.
const TargetPage = lazyPage(() => import('../features/target/TargetPage').then((m) => m.TargetPage));
const AlertsPage = lazyPage(() => import('../features/alerts/AlertsPage').then((m) => m.AlertsPage));
const SnapshotsPage = lazyPage(() => import('../features/snapshots/SnapshotsPage').then((m) => m.SnapshotsPage));
const SnapshotView = lazyPage(() => import('../features/snapshots/SnapshotView').then((m) => m.SnapshotView));

/** The app with its query cache (one per page load; a test renders its own). */
export function App({ client }: { client?: QueryClient }) {
  const [own] = useState(() => client ?? makeQueryClient());
  return (
    <QueryClientProvider client={own}>
      <Shell />
    </QueryClientProvider>
  );
}

/** The theme the viewer chose, on the root element (app.css: none = the system's). */
function useTheme(theme: ThemeChoice): void {
  useEffect(() => {
    const root = document.documentElement;
    if (theme === 'system') delete root.dataset.theme;
    else root.dataset.theme = theme;
  }, [theme]);
}

function Shell() {
  const { pathname, search } = useLocation();
  const prefs = usePrefs();
  useTheme(prefs.theme);
  const route = parseRoute(pathname);
  const auth = useAuth();
  // Reads need a login here (a read answered 401): show the login form instead of any page, and
  // nothing that would fetch data, until someone logs in.
  const locked = auth.loginRequired === true && !auth.user;
  return (
    <div className="app">
      <header className="topbar">
        <Link href="/" className="brand" testId="brand">
          Poolscope
        </Link>
        <nav className="topnav" aria-label="Main">
          <Link href="/" className={route.page === 'overview' ? 'nav-active' : ''} testId="nav-overview">
            Overview
          </Link>
          {route.page === 'target' ? <span className="nav-active nav-current">{route.name}</span> : null}
          <Link href="/alerts" className={route.page === 'alerts' ? 'nav-active' : ''} testId="nav-alerts">
            Alerts
          </Link>
          <Link href="/snapshots" className={route.page.startsWith('snapshot') ? 'nav-active' : ''} testId="nav-snapshots">
            Snapshots
          </Link>
        </nav>
        <ViewControls />
        {locked ? null : <TopbarCapture current={route.page === 'target' ? route.name : undefined} />}
        <UserMenu />
      </header>
      {locked ? null : <StoreBanner />}
      {locked ? null : <AlertBanner />}
      {locked ? (
        <main>
          <LoginForm next={route.page === 'login' ? loginNext(search) : pathname + search} />
        </main>
      ) : (
        // Every time on the pages is formatted in the chosen zone: a new choice draws them anew.
        <Pages key={prefs.tz} route={route} search={search} />
      )}
      <Footer />
    </div>
  );
}

function Pages({ route, search }: { route: Route; search: string }) {
  return (
    <main>
      {route.page === 'overview' ? <OverviewPage /> : null}
      {route.page === 'login' ? <LoginForm next={loginNext(search)} /> : null}
      <Suspense fallback={<PageLoading />}>
        {route.page === 'target' ? <TargetPage key={route.name} name={route.name} /> : null}
        {route.page === 'alerts' ? <AlertsPage /> : null}
        {route.page === 'snapshots' ? <SnapshotsPage /> : null}
        {route.page === 'snapshot' ? <SnapshotView key={route.id} id={route.id} /> : null}
      </Suspense>
      {route.page === 'notfound' ? (
        <div className="page">
          <Notice tone="warn" title="Page not found" testId="route-not-found">
            No page at <code>{route.path}</code>. <Link href="/">Go to the overview</Link>.
          </Notice>
        </div>
      ) : null}
    </main>
  );
}
