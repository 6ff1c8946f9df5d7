import { describe, expect, it } from 'vitest';
import { parseRoute, targetPath } from './router';

describe('parseRoute', () => {
  it('maps paths to pages', () => {
    expect(parseRoute('/')).toEqual({ page: 'overview' });
    expect(parseRoute('')).toEqual({ page: 'overview' });
    expect(parseRoute('/targets/sandbox')).toEqual({ page: 'target', name: 'sandbox' });
    expect(parseRoute('/targets/sandbox/')).toEqual({ page: 'target', name: 'sandbox' });
    expect(parseRoute('/nope')).toEqual({ page: 'notfound', path: '/nope' });
  });
  it('round-trips names that need encoding', () => {
    expect(parseRoute(targetPath('db 1/a'))).toEqual({ page: 'target', name: 'db 1/a' });
  });
});
