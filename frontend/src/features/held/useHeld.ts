// "Who held the pool" over the page's range: the digests ranked by stalled, held or queued seconds.
import { useQuery } from '@tanstack/react-query';
import { heldQuery } from '../../api/queries';
import type { HeldSort } from '../../api/types';
import { refreshEvery, usePrefs } from '../../lib/prefs';
import type { TimeRange } from '../../lib/range';
import { RELATIVE_REFRESH_MS } from '../target/useTargetData';

export function useHeld(name: string, range: TimeRange, sort: HeldSort) {
  const prefs = usePrefs();
  // A fixed range never changes; a moving one is read again as often as the charts' alert bands.
  const every = range.kind === 'custom' ? false : refreshEvery(prefs, RELATIVE_REFRESH_MS);
  return useQuery({ ...heldQuery(name, range, sort), refetchInterval: every });
}
