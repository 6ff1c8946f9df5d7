// The time range as URL state: read from ?range= / ?from=&to=, written with pushState so back/forward restore it.
import { useCallback, useMemo } from 'react';
import { parseRange, serializeRange, type TimeRange } from '../lib/range';
import { navigate, useLocation } from './router';

export function useRange(): [TimeRange, (r: TimeRange) => void] {
  const { pathname, search } = useLocation();
  const range = useMemo(() => parseRange(search), [search]);
  const setRange = useCallback((r: TimeRange) => navigate(pathname + serializeRange(r, search)), [pathname, search]);
  return [range, setRange];
}
