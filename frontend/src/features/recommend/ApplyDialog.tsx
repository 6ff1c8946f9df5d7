// Confirm step of one-click apply: current → proposed as the server will store it, what happens, the guard (on by default).
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useAuth } from '../../api/auth';
import { applyChange, fetchPreview, type ApplyPreview, type AuditEntry } from '../../api/changes';
import { errorMessage } from '../../api/client';
import { Dialog } from '../../ui/Dialog';
import { Notice } from '../../ui/ui';

export interface ApplyRequest {
  variable: string;
  value: string;
  recommendationId: string | null;
  title: string;
  /** The variable's unit as the server counts it ("ms", "×10 ms"), when it has one. */
  unit?: string | null;
}

/** A value with its unit, when it has one. */
export function withUnit(value: string | null | undefined, unit: string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return unit ? `${value} ${unit}` : value;
}

export function ApplyDialog({
  target,
  request,
  guardWindowS,
  onClose,
  onApplied,
}: {
  target: string;
  request: ApplyRequest;
  guardWindowS?: number;
  onClose: () => void;
  onApplied: (entry: AuditEntry) => void;
}) {
  const auth = useAuth();
  // What the server would store, checked now: never from the cache of an earlier dialog.
  const previewQ = useQuery({
    queryKey: ['target', target, 'preview', request.variable, request.value],
    queryFn: ({ signal }) => fetchPreview(target, request.variable, request.value, signal),
    gcTime: 0,
    retry: false,
  });
  const preview: ApplyPreview | null = previewQ.data ?? null;
  const [applyError, setError] = useState<string | null>(null);
  const error = applyError ?? (previewQ.error ? errorMessage(previewQ.error) : null);
  // Guarded unless the operator unticks it (or the server's guard_by_default is off).
  const [guardChoice, setGuard] = useState<boolean | null>(null);
  const guard = guardChoice ?? preview?.guard_default ?? true;
  const windowS = guardWindowS ?? preview?.guard_window_s;
  const [busy, setBusy] = useState(false);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      const entry = await applyChange(target, {
        variable: request.variable,
        value: request.value,
        recommendation_id: request.recommendationId,
        guard,
      });
      onApplied(entry);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog label={`Apply ${request.variable}`} onClose={onClose} testId="apply-dialog">
      <h2>{request.title}</h2>
      {preview ? (
        <>
          <p className="apply-change mono">
            {preview.variable}: <span data-testid="apply-current">{withUnit(preview.current, request.unit)}</span> →{' '}
            <strong data-testid="apply-proposed">{withUnit(preview.proposed, request.unit)}</strong>
          </p>
          <p className="small" data-testid="apply-what-happens">
            {preview.what_happens}
          </p>
          <p className="muted small">
            Server limits: {preview.meta.type}
            {preview.meta.min !== null
              ? `, ${withUnit(preview.meta.min, request.unit)} – ${withUnit(preview.meta.max, request.unit)}`
              : ''}
            {preview.meta.enum_values.length ? `, one of ${preview.meta.enum_values.join(', ')}` : ''}
          </p>
          <details className="small">
            <summary>Make it permanent</summary>
            {preview.persist_sql ? (
              <pre className="snippet">{preview.persist_sql}</pre>
            ) : (
              <>
                <span className="muted">MariaDB has no SET PERSIST; add to the server's option file:</span>
                <pre className="snippet" data-testid="apply-snippet">
                  {preview.config_snippet}
                </pre>
              </>
            )}
          </details>
          <label className="small apply-guard">
            <input type="checkbox" checked={guard} onChange={(e) => setGuard(e.target.checked)} data-testid="apply-guard" />{' '}
            Guarded: judge the change after {windowS ? `${Math.round(windowS)} s` : 'its window'} (queue wait, queued requests and
            stalls at matched load) and revert it automatically if the verdict is &ldquo;worse&rdquo; (never on a load change)
          </label>
        </>
      ) : error ? null : (
        <div className="loading">Checking against the server…</div>
      )}
      {error ? (
        <Notice tone="bad" title="Not applied" testId="apply-error">
          {error}
        </Notice>
      ) : null}
      <div className="dialog-buttons">
        <button type="button" className="btn" onClick={onClose} data-testid="apply-cancel">
          Cancel
        </button>
        <button
          type="button"
          className="btn btn-primary"
          disabled={!preview || busy || !auth.can('operator')}
          onClick={() => void confirm()}
          data-testid="apply-confirm"
        >
          {busy ? 'Applying…' : `Apply as ${auth.user?.name ?? '…'}`}
        </button>
      </div>
    </Dialog>
  );
}
