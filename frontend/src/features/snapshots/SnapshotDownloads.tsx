// A snapshot's exports as buttons: each downloads through the API client with the session (a plain
// link would need a cookie, which every port of the host receives).
import { useState } from 'react';
import { errorMessage } from '../../api/client';
import { downloadSnapshot, type SnapshotExport } from '../../api/snapshots';

const LABELS: [SnapshotExport, string][] = [
  ['archive', 'archive'],
  ['json', 'JSON'],
  ['report', 'report'],
];

export function SnapshotDownloads({
  id,
  moment,
  archiveLabel,
  testId,
}: {
  id: number;
  /** The snapshot's moment: the report names times in the viewer's zone as it was then. */
  moment: number;
  archiveLabel?: string;
  testId: string;
}) {
  const [error, setError] = useState<string | null>(null);
  const save = (kind: SnapshotExport) => {
    setError(null);
    downloadSnapshot(id, kind, moment).catch((e: unknown) => setError(errorMessage(e)));
  };
  return (
    <>
      {LABELS.map(([kind, label], i) => (
        <span key={kind}>
          {i ? ' · ' : null}
          <button
            type="button"
            className="link-btn"
            onClick={() => save(kind)}
            data-testid={kind === 'archive' ? testId : `${testId}-${kind}`}
          >
            {kind === 'archive' ? (archiveLabel ?? label) : label}
          </button>
        </span>
      ))}
      {error ? (
        <span className="bad small" role="alert">
          {' '}
          {error}
        </span>
      ) : null}
    </>
  );
}
