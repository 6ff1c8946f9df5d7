// App shell: header with navigation and the route switch (overview vs one target).
import { LoginForm, UserMenu } from '../features/auth/LoginForm';
import { OverviewPage } from '../features/overview/OverviewPage';
import { TargetPage } from '../features/target/TargetPage';
import { Link, Notice } from '../ui/ui';
import { loginNext, parseRoute, useLocation } from './router';

export function App() {
  const { pathname, search } = useLocation();
  const route = parseRoute(pathname);
  return (
    <div className="app">
      <header className="topbar">
        <Link href="/" className="brand" testId="brand">
          Poolscope
        </Link>
        <nav className="topnav">
          <Link href="/" className={route.page === 'overview' ? 'nav-active' : ''} testId="nav-overview">
            Overview
          </Link>
          {route.page === 'target' ? <span className="nav-active nav-current">{route.name}</span> : null}
        </nav>
        <span className="topbar-note muted small">MariaDB / MySQL thread pool</span>
        <UserMenu />
      </header>
      <main>
        {route.page === 'overview' ? <OverviewPage /> : null}
        {route.page === 'target' ? <TargetPage key={route.name} name={route.name} /> : null}
        {route.page === 'login' ? <LoginForm next={loginNext(search)} /> : null}
        {route.page === 'notfound' ? (
          <div className="page">
            <Notice tone="warn" title="Page not found" testId="route-not-found">
              No page at <code>{route.path}</code>. <Link href="/">Go to the overview</Link>.
            </Notice>
          </div>
        ) : null}
      </main>
    </div>
  );
}
