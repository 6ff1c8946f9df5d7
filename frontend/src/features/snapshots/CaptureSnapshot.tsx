// "Capture snapshot": on the snapshot list and, for operators, in the top bar of every page.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useAuth } from '../../api/auth';
import { errorMessage } from '../../api/client';
import { targetsQuery } from '../../api/queries';
import { captureSnapshot } from '../../api/snapshots';
import { navigate } from '../../app/router';
import '../alerts/alerts.css';

/** "Capture snapshot" for one target (the current one on a target page); operators only. */
export function CaptureSnapshot({ targets, initial }: { targets: string[]; initial?: string }) {
  const auth = useAuth();
  const [picked, setTarget] = useState(initial ?? '');
  const target = picked || targets[0] || '';
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!auth.can('operator')) return null;
  async function capture() {
    setBusy(true);
    setError(null);
    try {
      const { id } = await captureSnapshot(target);
      navigate(`/snapshots/${id}`);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }
  return (
    <span className="capture-form">
      {targets.length > 1 || !initial ? (
        <select
          aria-label="Target to capture"
          value={target}
          onChange={(e) => setTarget(e.target.value)}
          data-testid="capture-target"
        >
          {targets.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      ) : null}
      <button
        type="button"
        className="btn"
        disabled={busy || !target}
        onClick={() => void capture()}
        data-testid="capture-snapshot"
      >
        {busy ? 'Capturing…' : 'Capture snapshot'}
      </button>
      {error ? (
        <span className="form-error small" data-testid="capture-error">
          {error}
        </span>
      ) : null}
    </span>
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
