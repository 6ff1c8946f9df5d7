// Render a component the way the app does: inside a query cache of its own (one per test).
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { render, type RenderResult } from '@testing-library/react';
import type { ReactElement, ReactNode } from 'react';
import { makeQueryClient } from '../api/queries';

export function testQueryClient(): QueryClient {
  const client = makeQueryClient();
  // A test answers at once or not at all: retrying would only slow a failing test down.
  client.setDefaultOptions({ queries: { ...client.getDefaultOptions().queries, retry: false } });
  return client;
}

export function renderWithClient(
  ui: ReactElement,
  client: QueryClient = testQueryClient(),
): RenderResult & { client: QueryClient } {
  const rendered = render(<QueryClientProvider client={client}>{ui}</QueryClientProvider>);
  return {
    ...rendered,
    client,
    rerender: (next: ReactNode) => rendered.rerender(<QueryClientProvider client={client}>{next}</QueryClientProvider>),
  };
}
