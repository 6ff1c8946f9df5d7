import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { VariablesTable } from './ThreadsPanel';

describe('VariablesTable', () => {
  it("lists the variables in the backend's order, pool settings first, then names it does not list, sorted", () => {
    const variables = {
      zz_unlisted: '1',
      version: '10.11.6-MariaDB',
      aa_unlisted: '2',
      thread_pool_stall_limit: '500',
      thread_pool_size: '4',
      max_connections: '151',
    };
    const { container } = render(<VariablesTable variables={variables} />);
    const names = [...container.querySelectorAll('th')].map((th) => th.textContent);
    expect(names).toEqual([
      'thread_pool_size',
      'thread_pool_stall_limit',
      'max_connections',
      'version',
      'aa_unlisted',
      'zz_unlisted',
    ]);
  });
});
