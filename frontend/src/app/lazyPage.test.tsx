import { render, screen } from '@testing-library/react';
import { Suspense, type ComponentType } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { lazyPage, PageLoading } from './lazyPage';

function renderLazy(Page: ComponentType<{ label: string }>) {
  return render(
    <Suspense fallback={<PageLoading />}>
      <Page label="hello" />
    </Suspense>,
  );
}

describe('lazyPage', () => {
  it('shows the loading state, then the page with its props', async () => {
    const Page = lazyPage(async () => ({ label }: { label: string }) => <p data-testid="lazy-page">{label}</p>);
    renderLazy(Page);
    expect(screen.getByTestId('page-loading').getAttribute('role')).toBe('status');
    expect((await screen.findByTestId('lazy-page')).textContent).toBe('hello');
  });

  it('says the page could not be loaded when its code does not arrive', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const Page = lazyPage<{ label: string }>(() => Promise.reject(new TypeError('Failed to fetch dynamically imported module')));
    renderLazy(Page);
    expect((await screen.findByTestId('page-load-error')).textContent).toContain('Could not load this page');
    expect(logged).toHaveBeenCalled();
    logged.mockRestore();
  });
});
