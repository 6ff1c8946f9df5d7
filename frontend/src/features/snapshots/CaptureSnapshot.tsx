// "Capture snapshot": on the snapshot list and, for operators, in the top bar of every page.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useAuth } from '../../api/auth';
import { errorMessage } from '../../api/client';
import { targetsQuery } from '../../api/queries';
import { captureSnapshot } from '../../api/snapshots';
import { navigate } from '../../app/router';
import { Dialog } from '../../ui/Dialog';
import { Notice } from '../../ui/ui';
import '../alerts/alerts.css';

/** "Capture snapshot…" for one target (the current one on a target page), named before it is taken; operators only. */
export function CaptureSnapshot({ targets, initial }: { targets: string[]; initial?: string }) {
  const auth = useAuth();
  const [open, setOpen] = useState(false);
  if (!auth.can('operator')) return null;
  return (
    <>
      <button
        type="button"
        className="btn"
        disabled={!targets.length}
        onClick={() => setOpen(true)}
        data-testid="capture-snapshot"
      >
        Capture snapshot…
      </button>
      {open ? <CaptureDialog targets={targets} initial={initial} onClose={() => setOpen(false)} /> : null}
    </>
  );
}

function CaptureDialog({ targets, initial, onClose }: { targets: string[]; initial?: string; onClose: () => void }) {
  const [picked, setTarget] = useState(initial ?? '');
  const target = picked || targets[0] || '';
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function capture(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { id } = await captureSnapshot(target, title.trim() || undefined);
      onClose();
      navigate(`/snapshots/${id}`);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  }
  return (
    <Dialog label="Capture a snapshot" onClose={onClose} testId="capture-dialog">
      <form className="capture-form" onSubmit={(e) => void capture(e)}>
        <h2>Capture a snapshot</h2>
        <p className="muted small">
          The target&apos;s state, server tables and the charts around this moment, kept for later or to send.
        </p>
        <label>
          Target{' '}
          <select value={target} onChange={(e) => setTarget(e.target.value)} data-testid="capture-target">
            {targets.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Title{' '}
          <input
            value={title}
            maxLength={200}
            placeholder={`${target}: snapshot`}
            onChange={(e) => setTitle(e.target.value)}
            data-testid="capture-title"
          />
        </label>
        {error ? (
          <Notice tone="bad" title="Not captured" testId="capture-error">
            {error}
          </Notice>
        ) : null}
        <div className="dialog-buttons">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || !target} data-testid="capture-confirm">
            {busy ? 'Capturing…' : 'Capture'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The top bar's capture control, on every page (operators only); preselects the target being viewed. */
export function TopbarCapture({ current }: { current?: string }) {
  const auth = useAuth();
  const operator = auth.can('operator');
  const targets = useQuery({ ...targetsQuery, enabled: operator }).data?.map((t) => t.name) ?? [];
  if (!operator || !targets.length) return null;
  return <CaptureSnapshot key={current ?? ''} targets={targets} initial={current} />;
}
