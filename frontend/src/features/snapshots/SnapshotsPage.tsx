// The snapshot list: capture one now, import a file a colleague sent, open / download / delete.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ChangeEvent } from 'react';
import { useAuth } from '../../api/auth';
import { errorMessage } from '../../api/client';
import { keys, snapshotsQuery, targetsQuery } from '../../api/queries';
import { deleteSnapshot, importSnapshot } from '../../api/snapshots';
import { fmtDateTimeZone } from '../../lib/format';
import { Badge, Link, Notice, Panel } from '../../ui/ui';
import { CaptureSnapshot } from './CaptureSnapshot';
import { SnapshotDownloads } from './SnapshotDownloads';
import '../alerts/alerts.css';

const fmtSize = (bytes: number) => (bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} kB`);

export function SnapshotsPage() {
  const auth = useAuth();
  const qc = useQueryClient();
  const list = useQuery(snapshotsQuery);
  const items = list.data ?? null;
  const targets = useQuery(targetsQuery).data ?? [];
  const [importMessage, setImportMessage] = useState<{ tone: 'ok' | 'bad'; text: string } | null>(null);
  const load = () => void qc.invalidateQueries({ queryKey: keys.snapshots });
  const remove = useMutation({ mutationFn: deleteSnapshot, onSuccess: load });
  const error = list.error?.message ?? (remove.error ? errorMessage(remove.error) : null);

  async function onImport(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (!file) return;
    setImportMessage(null);
    try {
      const { id } = await importSnapshot(file);
      setImportMessage({ tone: 'ok', text: `Imported ${file.name} as snapshot #${id}.` });
      load();
    } catch (err) {
      setImportMessage({ tone: 'bad', text: `${file.name} was not imported: ${errorMessage(err)}` });
    }
  }

  return (
    <div className="page" data-testid="snapshots-page">
      <h1>Incident snapshots</h1>
      <div className="snapshot-toolbar">
        <CaptureSnapshot targets={targets.map((t) => t.name)} />
        {auth.can('operator') ? (
          <label className="btn">
            Import a snapshot file…
            <input
              type="file"
              accept=".json,.zip,application/json,application/zip"
              hidden
              onChange={(e) => void onImport(e)}
              data-testid="snapshot-import"
            />
          </label>
        ) : (
          <span className="muted small">
            <Link href="/login?next=/snapshots">Log in</Link> as an operator to capture or import snapshots.
          </span>
        )}
      </div>
      {importMessage ? (
        <Notice
          tone={importMessage.tone === 'ok' ? 'info' : 'bad'}
          title={importMessage.tone === 'ok' ? 'Imported' : 'Import refused'}
          testId="import-result"
        >
          {importMessage.text}
        </Notice>
      ) : null}
      {error ? (
        <Notice tone="bad" title="Could not list snapshots" testId="snapshots-error">
          {error}
        </Notice>
      ) : null}
      <Panel title="Snapshots (newest first)" testId="snapshot-list">
        {!items ? (
          <div className="loading">Loading…</div>
        ) : items.length === 0 ? (
          <div className="empty">No snapshot yet. One is taken automatically when a stall alert fires.</div>
        ) : (
          <table className="grid">
            <thead>
              <tr>
                <th>moment</th>
                <th>target</th>
                <th>title</th>
                <th>how</th>
                <th>window</th>
                <th>size</th>
                <th>download</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((s) => (
                <tr key={s.id} data-testid="snapshot-row" data-trigger={s.trigger} data-id={s.id}>
                  <td>
                    <Link href={`/snapshots/${s.id}`} testId="snapshot-open">
                      {fmtDateTimeZone(s.moment_ts)}
                    </Link>
                  </td>
                  <td>{s.target}</td>
                  <td>{s.title}</td>
                  <td>
                    <Badge tone={s.trigger === 'alert' ? 'bad' : 'info'}>{s.trigger}</Badge>
                  </td>
                  <td>{s.status === 'complete' ? 'complete' : <Badge tone="warn">collecting</Badge>}</td>
                  <td>{fmtSize(s.size_bytes)}</td>
                  <td>
                    <SnapshotDownloads id={s.id} moment={s.moment_ts} testId="snapshot-archive" />
                  </td>
                  <td>
                    {auth.can('operator') ? (
                      <button type="button" className="btn btn-small" onClick={() => remove.mutate(s.id)}>
                        Delete
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
      <p className="muted small">
        The JSON follows a published schema (<a href="/api/snapshots/schema.json">schema.json</a>); the archive adds a report that
        opens offline.
      </p>
    </div>
  );
}
