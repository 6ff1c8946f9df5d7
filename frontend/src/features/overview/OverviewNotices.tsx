// What both overview views say above their targets: how many (and how many down), an unreachable
// backend, and which targets have stalled thread groups.
import { targetPath } from '../../app/router';
import { unreachableTitle } from '../../lib/domain';
import { fmtAgo, plural } from '../../lib/format';
import { Link, Notice } from '../../ui/ui';

/** At most this many stalled targets are named in the banner; the rest are counted. */
const NAMED_STALLED = 10;

export function TargetCount({ total, down }: { total: number; down: number }) {
  return (
    <span className="muted small">
      {plural(total, 'target')}
      {down ? <span className="text-bad"> · {down} down</span> : null}
    </span>
  );
}

export function OverviewNotices({
  error,
  hasData,
  updatedAt,
  now,
  stalled,
}: {
  error: Error | null;
  hasData: boolean;
  updatedAt: number | null;
  now: number;
  stalled: { name: string; groups: number | null | undefined }[];
}) {
  return (
    <>
      {error ? (
        <Notice tone="bad" title={unreachableTitle(error)} testId="backend-error">
          {error.message}
          {hasData && updatedAt
            ? ` — showing data from ${fmtAgo(updatedAt, now)}; retrying every 5 s.`
            : '. Is `poolscope serve` running? Retrying every 5 s.'}
        </Notice>
      ) : null}
      {stalled.length ? (
        <Notice tone="bad" title="Thread pool stall" testId="stalled-banner">
          Stalled groups on{' '}
          {stalled.slice(0, NAMED_STALLED).map((t, i) => (
            <span key={t.name}>
              {i > 0 ? ', ' : ''}
              <Link href={targetPath(t.name)}>{t.name}</Link> ({t.groups})
            </span>
          ))}
          {stalled.length > NAMED_STALLED ? ` and ${stalled.length - NAMED_STALLED} more` : ''}.
        </Notice>
      ) : null}
    </>
  );
}
