// Code-split pages: fetched on first visit, with a plain loading state meanwhile and a notice if the code cannot be fetched.
import { lazy, type ComponentType } from 'react';
import { Notice } from '../ui/ui';

/** Shown while a page's code is being fetched (the Suspense fallback). */
export function PageLoading() {
  return (
    <div className="page">
      <div className="loading" role="status" data-testid="page-loading">
        Loading…
      </div>
    </div>
  );
}

/** The page's code did not arrive (offline, or a new build replaced the file): say so rather than unmount the app. */
function PageLoadFailed() {
  return (
    <div className="page">
      <Notice tone="bad" title="Could not load this page" testId="page-load-error">
        Its code did not arrive from the server (offline, or Poolscope was updated). Reload the page to try again.
      </Notice>
    </div>
  );
}

/** A page component loaded with a dynamic import, for use inside `<Suspense fallback={<PageLoading />}>`. */
export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>) {
  return lazy(() =>
    load().then(
      (Page) => ({ default: Page }),
      (err: unknown) => {
        console.error('page failed to load', err);
        return { default: PageLoadFailed as ComponentType<P> };
      },
    ),
  );
}
