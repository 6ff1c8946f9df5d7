// Recommendations with their evidence and window, one-click apply for operators, and the ones that went away.
import { useState } from 'react';
import { useAuth } from '../../api/auth';
import type { AuditEntry, Recommendation, Recommendations } from '../../api/changes';
import { fmtAgo, fmtClock } from '../../lib/format';
import { Badge, Link, Notice, Panel, type Tone } from '../../ui/ui';
import { ApplyDialog, withUnit, type ApplyRequest } from './ApplyDialog';
import './recommend.css';

const TONE: Record<Recommendation['severity'], Tone> = { critical: 'bad', warning: 'warn', info: 'info' };

function RecommendationCard({
  rec,
  onApply,
  canApply,
}: {
  rec: Recommendation;
  onApply: (req: ApplyRequest) => void;
  canApply: boolean;
}) {
  return (
    <article className={`rec rec-${rec.severity}`} data-testid={`rec-${rec.rule}`}>
      <header className="rec-head">
        <Badge tone={TONE[rec.severity]}>{rec.severity}</Badge>
        <strong className="rec-title">{rec.title}</strong>
        <span className="mono small" data-testid="rec-change">
          {rec.variable}: {withUnit(rec.current, rec.unit)} → {withUnit(rec.proposed, rec.unit)}
        </span>
        <Badge
          tone={rec.apply === 'live' ? 'ok' : 'muted'}
          title={rec.apply === 'live' ? 'SET GLOBAL, no restart' : 'needs a restart'}
        >
          {rec.apply === 'live' ? 'live' : 'restart'}
        </Badge>
      </header>
      <p className="rec-why">{rec.why}</p>
      <dl className="rec-evidence" data-testid="rec-evidence">
        {rec.evidence.map((e) => (
          <div key={e.label}>
            <dt>{e.label}</dt>
            <dd>{e.value}</dd>
          </div>
        ))}
      </dl>
      <footer className="rec-foot small">
        <Link href={rec.chart_url} testId="rec-window">
          {rec.window.polls
            ? `evidence: ${fmtClock(rec.window.from)} – ${fmtClock(rec.window.to)} (${Math.round(rec.window.seconds)} s, ${rec.window.polls} polls)`
            : `from the current configuration · charts ${fmtClock(rec.window.from)} – ${fmtClock(rec.window.to)}`}
        </Link>
        <a href={rec.read_more} target="_blank" rel="noreferrer">
          read more
        </a>
        <details>
          <summary>config snippet</summary>
          <pre className="snippet">{rec.persist_sql ?? rec.config_snippet}</pre>
        </details>
        {rec.applicable ? (
          canApply ? (
            <button
              type="button"
              className="btn btn-primary"
              data-testid={`rec-apply-${rec.rule}`}
              onClick={() =>
                onApply({
                  variable: rec.variable,
                  value: rec.proposed,
                  recommendationId: rec.id,
                  title: rec.title,
                  unit: rec.unit,
                })
              }
            >
              Apply…
            </button>
          ) : (
            <span className="muted">log in as an operator to apply</span>
          )
        ) : (
          <span className="muted" data-testid="rec-not-applicable">
            {rec.not_applicable_reason}
          </span>
        )}
      </footer>
    </article>
  );
}

export function RecommendationsPanel({
  target,
  data,
  error,
  now,
  guardWindowS,
  onChanged,
}: {
  target: string;
  data: Recommendations | null;
  error: string | null;
  now: number;
  guardWindowS?: number;
  onChanged: (entry: AuditEntry) => void;
}) {
  const auth = useAuth();
  const [request, setRequest] = useState<ApplyRequest | null>(null);
  const active = data?.active ?? [];
  const vanished = data?.vanished ?? [];
  return (
    <Panel
      title={`Recommendations${active.length ? ` (${active.length})` : ''}`}
      testId="recommendations-panel"
      extra={data?.evaluated_at ? <span className="muted small">evaluated {fmtAgo(data.evaluated_at, now)}</span> : null}
    >
      {error ? (
        <Notice tone="warn" title="Recommendations unavailable">
          {error}
        </Notice>
      ) : null}
      {data && !active.length ? (
        <div className="empty" data-testid="recommendations-empty">
          {data.note ?? 'Nothing to change: every rule is satisfied by what the last minutes show.'}
        </div>
      ) : null}
      <div className="rec-list">
        {active.map((rec) => (
          <RecommendationCard key={rec.id} rec={rec} onApply={setRequest} canApply={auth.can('operator')} />
        ))}
      </div>
      {vanished.length ? (
        <details className="vanished" data-testid="vanished-list">
          <summary className="small">
            {vanished.length === 1 ? '1 recommendation no longer holds' : `${vanished.length} recommendations no longer hold`}
          </summary>
          <ul className="small">
            {vanished.map((v) => (
              <li key={`${v.id}-${v.gone_at}`} data-testid={`vanished-${v.rule}`}>
                <strong>{v.title}</strong> — gone {fmtAgo(v.gone_at, now)}: {v.why_gone}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {data?.rules.length ? (
        <details className="small">
          <summary>every rule's verdict</summary>
          <ul data-testid="rule-verdicts">
            {data.rules.map((r) => (
              <li key={r.rule}>
                <code>{r.rule}</code>: {r.note}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {request ? (
        <ApplyDialog
          target={target}
          request={request}
          guardWindowS={guardWindowS}
          onClose={() => setRequest(null)}
          onApplied={(entry) => {
            setRequest(null);
            onChanged(entry);
          }}
        />
      ) : null}
    </Panel>
  );
}
