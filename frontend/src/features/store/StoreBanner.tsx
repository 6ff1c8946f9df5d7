// Shown on every page while the store fails: since when and why, and what the pollers hold for it
// (GET /api/store, every 2 s): they go on polling and alerting from memory meanwhile.
import { useQuery } from '@tanstack/react-query';
import { storeQuery } from '../../api/queries';
import type { StoreStatus } from '../../api/types';
import { fmtDateTime, fmtNum } from '../../lib/format';
import { Notice } from '../../ui/ui';

export const STORE_REFRESH_MS = 2000;

export function storeTitle(s: StoreStatus): string {
  return `${s.reads === 'failing' ? 'Store unreachable' : 'Store failing'} since ${fmtDateTime(s.since)}`;
}

/** "live data held in memory; 1,234 samples buffered" (and what was dropped, if anything). */
export function storeHeld(s: StoreStatus): string {
  const dropped = s.dropped_samples ? `; ${fmtNum(s.dropped_samples)} samples dropped (buffer full)` : '';
  return `live data held in memory; ${fmtNum(s.buffered_samples)} samples buffered${dropped}`;
}

export function StoreNotice({ status }: { status: StoreStatus }) {
  return (
    <Notice tone="bad" title={storeTitle(status)} testId="store-banner">
      <span data-testid="store-held">{storeHeld(status)}</span>
      {status.error ? <div className="muted small">{status.error}</div> : null}
    </Notice>
  );
}

export function StoreBanner() {
  // No answer at all: the pages say the backend is unreachable; this one says nothing.
  const { data } = useQuery({ ...storeQuery, refetchInterval: STORE_REFRESH_MS, retry: false });
  return data && data.status === 'failing' ? <StoreNotice status={data} /> : null;
}
