// The audit log of a target: who changed what when, the outcome, guard verdicts, revert and before/after.
import { useQuery } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { useAuth } from '../../api/auth';
import { revertChange, tookEffect, type AuditEntry, type AuditResult, type Comparison, type Verdict } from '../../api/changes';
import { errorMessage } from '../../api/client';
import { fmtDateTimeZone, fmtNum } from '../../lib/format';
import type { CsvColumn } from '../../lib/csv';
import { CsvButton } from '../../ui/tables';
import { Dialog } from '../../ui/Dialog';
import { comparisonQuery } from './useChanges';
import { Badge, Notice, Panel, type Tone } from '../../ui/ui';

const VERDICT_TONE: Record<Verdict, Tone> = {
  better: 'ok',
  worse: 'bad',
  'no detectable change': 'muted',
  inconclusive: 'warn',
};

function pct(change: number | null): string {
  return change === null ? '—' : `${change > 0 ? '+' : ''}${(change * 100).toFixed(0)} %`;
}

function signed(v: number | null): string {
  return v === null ? '—' : `${v > 0 ? '+' : ''}${fmtNum(v)}`;
}

/** The verdict of a change: whether the load moved, and what it did at matched load, with intervals. */
export function ComparisonTable({ c }: { c: Comparison }) {
  return (
    <div className="compare" data-testid="compare-table" data-verdict={c.verdict}>
      <p className="small">
        <Badge tone={VERDICT_TONE[c.verdict]} testId="compare-verdict">
          {c.verdict}
        </Badge>{' '}
        <span data-testid="compare-headline">{c.headline}</span>
      </p>
      {c.reasons.length > 1 ? (
        <ul className="small muted">
          {c.reasons.slice(1).map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      ) : null}
      <table className="compare-table small">
        <caption className="muted">
          {Math.round(c.window_s)} s before vs after, poll by poll{c.complete ? '' : ' (window after still running)'}; compared at
          matched load: {c.matched_before} of {c.polls_before} polls before, {c.matched_after} of {c.polls_after} after
        </caption>
        <thead>
          <tr>
            <th>load</th>
            <th className="num">before (median)</th>
            <th className="num">after (median)</th>
            <th className="num">change</th>
          </tr>
        </thead>
        <tbody>
          {c.load.map((m) => (
            <tr key={m.metric} data-testid={`compare-${m.metric}`} className={m.shifted ? 'text-warn' : undefined}>
              <td>{m.label}</td>
              <td className="num">{fmtNum(m.before)}</td>
              <td className="num">{fmtNum(m.after)}</td>
              <td className="num">
                {pct(m.change)}
                {m.shifted ? ' (load changed)' : ''}
              </td>
            </tr>
          ))}
        </tbody>
        <thead>
          <tr>
            <th>at matched load</th>
            <th className="num">before</th>
            <th className="num">after</th>
            <th className="num">difference (interval)</th>
          </tr>
        </thead>
        <tbody>
          {c.effects.map((e) => (
            <tr key={e.metric} data-testid={`compare-${e.metric}`} data-verdict={e.verdict}>
              <td>{e.label}</td>
              <td className="num">{fmtNum(e.before)}</td>
              <td className="num">{fmtNum(e.after)}</td>
              <td className="num" data-testid="compare-interval">
                {e.note ??
                  `${signed(e.difference)}${e.low !== null && e.high !== null ? ` (${signed(e.low)} … ${signed(e.high)})` : ''} · ${e.verdict}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {c.overlaps.length ? (
        <p className="small text-warn" data-testid="compare-overlaps">
          Other changes inside the windows:{' '}
          {c.overlaps.map((o) => `#${o.id} ${o.variable} ${o.old_value ?? '—'} → ${o.new_value}`).join('; ')}
        </p>
      ) : null}
    </div>
  );
}

/** The before/after comparison of one change, fetched when opened. */
function ComparisonRow({ target, id }: { target: string; id: number }) {
  const q = useQuery(comparisonQuery(target, id));
  if (q.error) return <span className="text-bad">{errorMessage(q.error)}</span>;
  return q.data ? <ComparisonTable c={q.data} /> : <span className="muted small">Loading…</span>;
}

export const AUDIT_CSV: CsvColumn<AuditEntry>[] = [
  { header: 'id', value: (e) => e.id },
  { header: 'at', value: (e) => new Date(e.ts * 1000).toISOString() },
  { header: 'user', value: (e) => e.user },
  { header: 'action', value: (e) => e.action },
  { header: 'manual', value: (e) => (e.manual ? 'manual' : '') },
  { header: 'variable', value: (e) => e.variable },
  { header: 'old_value', value: (e) => e.old_value },
  { header: 'new_value', value: (e) => e.new_value },
  { header: 'result', value: (e) => e.result },
  { header: 'reverted_by', value: (e) => e.reverted_by_id },
  { header: 'guard', value: (e) => e.guard_status },
  { header: 'detail', value: (e) => e.detail },
];

const RESULT: Record<AuditResult, { tone: Tone; label: string; title: string }> = {
  applied: { tone: 'ok', label: 'applied', title: 'set and read back' },
  unverified: {
    tone: 'warn',
    label: 'applied, read-back failed',
    title: 'the server accepted the change but its value could not be read back: it probably holds the new value',
  },
  failed: { tone: 'bad', label: 'failed', title: 'not changed (see the detail)' },
};

function actionLabel(e: AuditEntry): string {
  if (e.action === 'auto_revert') return `auto-revert of #${e.reverts_id}`;
  if (e.action === 'revert') return `revert of #${e.reverts_id}`;
  return 'apply';
}

export function AuditPanel({
  target,
  entries,
  error,
  onChanged,
}: {
  target: string;
  entries: AuditEntry[] | null;
  error: string | null;
  onChanged: (entry: AuditEntry) => void;
}) {
  const auth = useAuth();
  const [busy, setBusy] = useState<number | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  const [confirming, setConfirming] = useState<AuditEntry | null>(null);

  async function revert(e: AuditEntry) {
    setConfirming(null);
    setBusy(e.id);
    setActionError(null);
    try {
      onChanged(await revertChange(target, e.id));
    } catch (err) {
      setActionError(`Revert of #${e.id} failed: ${errorMessage(err)}`);
    } finally {
      setBusy(null);
    }
  }

  function toggleCompare(id: number) {
    const next = new Set(open);
    if (!next.delete(id)) next.add(id);
    setOpen(next);
  }

  return (
    <Panel
      title="Changes (audit)"
      testId="audit-panel"
      extra={<CsvButton name={`${target}-audit`} rows={entries ?? []} columns={AUDIT_CSV} testId="audit-csv" />}
    >
      {error ? (
        <Notice tone="warn" title="Audit log unavailable">
          {error}
        </Notice>
      ) : null}
      {actionError ? (
        <Notice tone="bad" title="Not reverted" testId="audit-error">
          {actionError}
        </Notice>
      ) : null}
      {entries && !entries.length ? (
        <div className="empty" data-testid="audit-empty">
          No changes made through Poolscope yet.
        </div>
      ) : null}
      {entries?.length ? (
        <div className="table-wrap">
          <table className="audit-table">
            <thead>
              <tr>
                <th>#</th>
                <th>when</th>
                <th>who</th>
                <th>action</th>
                <th>variable</th>
                <th>old → new</th>
                <th>result</th>
                <th>guard</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => {
                const cmp = open.has(e.id);
                const revertable = tookEffect(e.result) && e.action === 'apply' && e.reverted_by_id === null;
                const result = RESULT[e.result];
                return (
                  <Fragment key={e.id}>
                    <tr data-testid={`audit-row-${e.id}`} data-variable={e.variable} data-result={e.result}>
                      <td className="num">{e.id}</td>
                      <td>{fmtDateTimeZone(e.ts)}</td>
                      <td>{e.user}</td>
                      <td>
                        {actionLabel(e)}
                        {e.manual ? (
                          <>
                            {' '}
                            <Badge tone="info" title="applied by hand, with no recommendation behind it" testId="audit-manual">
                              manual
                            </Badge>
                          </>
                        ) : null}
                      </td>
                      <td className="mono">{e.variable}</td>
                      <td className="mono" data-testid="audit-values">
                        {e.old_value ?? '—'} → {e.new_value}
                      </td>
                      <td title={e.detail ?? undefined}>
                        <Badge tone={result.tone} title={result.title} testId="audit-result">
                          {result.label}
                        </Badge>
                        {e.reverted_by_id !== null ? <span className="muted small"> reverted by #{e.reverted_by_id}</span> : null}
                        {e.detail ? <div className="muted small">{e.detail}</div> : null}
                      </td>
                      <td className="small" data-testid="audit-guard">
                        {e.guard_status ? (
                          <Badge tone={e.guard_status === 'reverted' ? 'bad' : 'muted'}>{e.guard_status}</Badge>
                        ) : null}
                        {e.guard_note ? <div className="muted">{e.guard_note}</div> : null}
                      </td>
                      <td className="audit-actions">
                        <button
                          type="button"
                          className="link-btn"
                          onClick={() => toggleCompare(e.id)}
                          data-testid={`audit-compare-${e.id}`}
                        >
                          {cmp ? 'hide' : 'before/after'}
                        </button>
                        {revertable && auth.can('operator') ? (
                          <button
                            type="button"
                            className="btn btn-danger"
                            disabled={busy === e.id}
                            onClick={() => setConfirming(e)}
                            data-testid={`audit-revert-${e.id}`}
                          >
                            {busy === e.id ? 'Reverting…' : 'Revert'}
                          </button>
                        ) : null}
                      </td>
                    </tr>
                    {cmp ? (
                      <tr>
                        <td colSpan={9}>
                          <ComparisonRow target={target} id={e.id} />
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {confirming ? (
        <Dialog label={`Revert change #${confirming.id}`} onClose={() => setConfirming(null)} testId="revert-dialog">
          <h2>Revert #{confirming.id}?</h2>
          <p className="apply-change mono">
            {confirming.variable}: {confirming.new_value} →{' '}
            <strong data-testid="revert-restores">{confirming.old_value ?? '—'}</strong>
          </p>
          <p className="small">
            SET GLOBAL {confirming.variable} = {confirming.old_value ?? '—'} through the admin credential, at once, for the whole
            server.
          </p>
          <div className="dialog-buttons">
            <button type="button" className="btn" onClick={() => setConfirming(null)} data-testid="revert-cancel">
              Cancel
            </button>
            <button type="button" className="btn btn-danger" onClick={() => void revert(confirming)} data-testid="revert-confirm">
              Revert to {confirming.old_value ?? '—'}
            </button>
          </div>
        </Dialog>
      ) : null}
    </Panel>
  );
}
