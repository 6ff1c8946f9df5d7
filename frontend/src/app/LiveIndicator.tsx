// Shows whether the SSE live channel is connected, reconnecting, or replaced by periodic refetching.
import type { LiveStatus } from '../api/live';

const TEXT: Record<LiveStatus, { label: string; title: string }> = {
  open: { label: 'live', title: 'Receiving every poll over /api/live (SSE).' },
  connecting: { label: 'connecting…', title: 'Opening the /api/live event stream.' },
  error: {
    label: 'live stream lost — refetching every 5 s',
    title: 'The /api/live event stream failed; the browser keeps retrying it.',
  },
  unsupported: { label: 'no SSE — refetching every 5 s', title: 'This browser cannot read a streamed answer.' },
  paused: { label: 'paused', title: 'Refreshing is paused: the ▶ button in the top bar resumes it.' },
};

export function LiveIndicator({ status }: { status: LiveStatus }) {
  const t = TEXT[status];
  return (
    <span className={`live live-${status}`} title={t.title} data-testid="live-status" data-status={status}>
      <span className="live-dot" aria-hidden="true" />
      {t.label}
    </span>
  );
}
