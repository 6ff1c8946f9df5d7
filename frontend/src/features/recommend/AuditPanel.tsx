// The audit log of a target: who changed what when, the outcome, guard verdicts, revert and before/after.
import { useQuery } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { useAuth } from '../../api/auth';
import { fetchComparison, revertChange, tookEffect, type AuditEntry, type AuditResult, type Comparison } from '../../api/changes';
import { errorMessage } from '../../api/client';
import { fmtDateTime, fmtNum } from '../../lib/format';
import type { CsvColumn } from '../../lib/csv';
import { CsvButton } from '../../ui/tables';
import { Badge, Notice, Panel, type Tone } from '../../ui/ui';

function ComparisonTable({ c }: { c: Comparison }) {
  return (
    <table className="compare-table small" data-testid="compare-table">
      <caption className="muted">
        {Math.round(c.window_s)} s before vs after{c.complete ? '' : ' (after-window still running)'}
      </caption>
      <thead>
        <tr>
          <th>metric</th>
          <th className="num">before</th>
          <th className="num">after</th>
          <th className="num">change</th>
        </tr>
      </thead>
      <tbody>
        {c.metrics.map((m) => (
          <tr key={m.metric} data-testid={`compare-${m.metric}`}>
            <td>{m.label}</td>
            <td className="num">{fmtNum(m.before)}</td>
            <td className="num">{fmtNum(m.after)}</td>
            <td className="num">{m.change === null ? '—' : `${m.change > 0 ? '+' : ''}${(m.change * 100).toFixed(0)}%`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The before/after comparison of one change, fetched when opened. */
function ComparisonRow({ target, id }: { target: string; id: number }) {
  const q = useQuery({
    queryKey: ['target', target, 'compare', id],
    queryFn: ({ signal }) => fetchComparison(target, id, signal),
    retry: false,
  });
  if (q.error) return <span className="text-bad">{errorMessage(q.error)}</span>;
  return q.data ? <ComparisonTable c={q.data} /> : <span className="muted small">Loading…</span>;
}

export const AUDIT_CSV: CsvColumn<AuditEntry>[] = [
  { header: 'id', value: (e) => e.id },
  { header: 'at', value: (e) => new Date(e.ts * 1000).toISOString() },
  { header: 'user', value: (e) => e.user },
  { header: 'action', value: (e) => e.action },
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

  async function revert(e: AuditEntry) {
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
                      <td>{fmtDateTime(e.ts)}</td>
                      <td>{e.user}</td>
                      <td>{actionLabel(e)}</td>
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
                            onClick={() => void revert(e)}
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
    </Panel>
  );
}
