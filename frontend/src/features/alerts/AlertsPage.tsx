// The alert list: firing and pending alerts (acknowledge, silence), silences in effect, history, webhook delivery log.
import { useQuery } from '@tanstack/react-query';
import { handled, sortAlerts, useAlertActions, useAlerts } from '../../api/alerts';
import { useAuth } from '../../api/auth';
import { alertHistoryQuery, deliveriesQuery } from '../../api/queries';
import type { Alert } from '../../api/types';
import { fmtAgo, fmtDateTimeZone } from '../../lib/format';
import { useNow } from '../../lib/hooks';
import { refreshEvery, usePrefs } from '../../lib/prefs';
import { alertChartsPath } from '../../charts/bands';
import { Badge, Link, Notice, Panel } from '../../ui/ui';
import { HandledNote } from './Handled';
import './alerts.css';

const LOGS_REFRESH_MS = 10000;

const SILENCE_OPTIONS: [string, number][] = [
  ['1 h', 3600],
  ['4 h', 4 * 3600],
  ['24 h', 86400],
];

function StatusBadge({ a }: { a: Alert }) {
  if (a.status === 'firing') {
    return (
      <Badge tone={a.silenced_by !== null ? 'muted' : 'bad'} testId="alert-status">
        {a.silenced_by !== null ? 'firing (silenced)' : 'firing'}
        {a.flapping ? ' · flapping' : ''}
      </Badge>
    );
  }
  if (a.status === 'pending')
    return (
      <Badge tone="warn" testId="alert-status">
        pending
      </Badge>
    );
  return (
    <Badge tone="ok" testId="alert-status">
      resolved
    </Badge>
  );
}

export function AlertsPage() {
  const alerts = useAlerts();
  const auth = useAuth();
  const now = useNow(1000);
  const every = refreshEvery(usePrefs(), LOGS_REFRESH_MS);
  const historyQ = useQuery({ ...alertHistoryQuery, refetchInterval: every });
  const history = historyQ.data ?? null;
  const deliveries = useQuery({ ...deliveriesQuery, refetchInterval: every }).data ?? null;
  const operator = auth.can('operator');
  const actions = useAlertActions();
  const error = actions.error;

  const active = sortAlerts(alerts.active.values());
  return (
    <div className="page" data-testid="alerts-page">
      <h1>Alerts</h1>
      {error ? (
        <Notice tone="bad" title="Action failed" testId="alerts-error">
          {error}
        </Notice>
      ) : null}
      {!operator ? (
        <p className="muted small">
          <Link href="/login?next=/alerts">Log in</Link> as an operator to acknowledge or silence alerts.
        </p>
      ) : null}
      <Panel title="Active" testId="alerts-active" extra={<span className="muted small">{active.length} active</span>}>
        {active.length === 0 ? (
          <div className="empty" data-testid="alerts-none">
            {alerts.loaded ? 'Nothing firing.' : 'Loading…'}
          </div>
        ) : (
          <div className="table-wrap">
            <table className="grid">
              <thead>
                <tr>
                  <th>status</th>
                  <th>severity</th>
                  <th>target</th>
                  <th>alert</th>
                  <th>since</th>
                  <th>details</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {active.map((a) => (
                  <tr
                    key={a.fingerprint}
                    className={handled(a) ? 'alert-row-handled' : a.status === 'firing' ? 'alert-row-firing' : ''}
                    data-testid="alert-row"
                    data-handled={handled(a)}
                    data-rule={a.rule}
                    data-target={a.target}
                  >
                    <td>
                      <StatusBadge a={a} />
                    </td>
                    <td>
                      <span className={`sev sev-${a.severity}`}>{a.severity}</span>
                    </td>
                    <td>
                      <Link href={`/targets/${encodeURIComponent(a.target)}`}>{a.target}</Link>
                      <div className="small">
                        <Link href={alertChartsPath(a, now)} testId="alert-charts-link">
                          charts
                        </Link>
                      </div>
                    </td>
                    <td>
                      <strong>{a.rule}</strong>
                      {a.group !== null ? ` · group ${a.group}` : ''}
                      <div className="small">{a.summary}</div>
                    </td>
                    <td title={fmtDateTimeZone(a.fired_at ?? a.started_at)}>{fmtAgo(a.fired_at ?? a.started_at, now)}</td>
                    <td className="small alert-details">
                      {a.description}
                      <HandledNote alert={a} silences={alerts.silences} />
                      {a.snapshot_id !== null ? (
                        <div>
                          <Link href={`/snapshots/${a.snapshot_id}`} testId="alert-snapshot-link">
                            snapshot #{a.snapshot_id}
                          </Link>
                        </div>
                      ) : null}
                    </td>
                    <td>
                      {operator && a.status === 'firing' && a.id !== null ? (
                        <div className="alert-actions">
                          {!a.acked_by ? (
                            <button
                              type="button"
                              className="btn btn-small"
                              data-testid="alert-ack"
                              onClick={() => actions.acknowledge(a)}
                            >
                              Acknowledge
                            </button>
                          ) : null}
                          {a.silenced_by === null
                            ? SILENCE_OPTIONS.map(([label, seconds]) => (
                                <button
                                  key={label}
                                  type="button"
                                  className="btn btn-small"
                                  data-testid="alert-silence"
                                  onClick={() =>
                                    actions.silence({
                                      target: a.target,
                                      rule: a.rule,
                                      group: a.group,
                                      duration_s: seconds,
                                      comment: `silenced from the alert list by ${auth.user?.name ?? ''}`,
                                    })
                                  }
                                >
                                  Silence {label}
                                </button>
                              ))
                            : null}
                        </div>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Panel>
      <Panel title="Silences in effect" testId="alerts-silences">
        {alerts.silences.length === 0 ? (
          <div className="empty">None.</div>
        ) : (
          <table className="grid">
            <thead>
              <tr>
                <th>matches</th>
                <th>until</th>
                <th>by</th>
                <th>comment</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {alerts.silences.map((s) => (
                <tr key={s.id} data-testid="silence-row">
                  <td>
                    {[s.target && `target ${s.target}`, s.rule && `rule ${s.rule}`, s.group !== null && `group ${s.group}`]
                      .filter(Boolean)
                      .join(', ')}
                  </td>
                  <td>{fmtDateTimeZone(s.ends_at)}</td>
                  <td>{s.created_by}</td>
                  <td>{s.comment}</td>
                  <td>
                    {operator ? (
                      <button
                        type="button"
                        className="btn btn-small"
                        data-testid="silence-expire"
                        onClick={() => actions.expire(s.id)}
                      >
                        End now
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
      <Panel title="History (fired alerts, newest first)" testId="alerts-history">
        {!history ? (
          historyQ.error ? (
            <Notice tone="bad" title="Could not read the alert history" testId="alerts-history-error">
              {historyQ.error.message}
            </Notice>
          ) : (
            <div className="loading">Loading…</div>
          )
        ) : history.length === 0 ? (
          <div className="empty">No alert has fired yet.</div>
        ) : (
          <div className="table-wrap">
            <table className="grid">
              <thead>
                <tr>
                  <th>fired</th>
                  <th>resolved</th>
                  <th>target</th>
                  <th>alert</th>
                  <th>acknowledged</th>
                  <th>snapshot</th>
                </tr>
              </thead>
              <tbody>
                {history.map((a) => (
                  <tr key={a.id ?? a.fingerprint} data-testid="history-row" data-rule={a.rule}>
                    <td>{fmtDateTimeZone(a.fired_at)}</td>
                    <td>{a.resolved_at ? fmtDateTimeZone(a.resolved_at) : <StatusBadge a={a} />}</td>
                    <td>{a.target}</td>
                    <td>
                      <span className={`sev sev-${a.severity}`}>{a.severity}</span>{' '}
                      <Link href={alertChartsPath(a, now)} testId="history-charts-link">
                        {a.summary}
                      </Link>
                    </td>
                    <td>{a.acked_by ?? ''}</td>
                    <td>{a.snapshot_id !== null ? <Link href={`/snapshots/${a.snapshot_id}`}>#{a.snapshot_id}</Link> : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Panel>
      <Panel title="Webhook deliveries (every attempt, newest first)" testId="alerts-deliveries">
        {!deliveries || deliveries.length === 0 ? (
          <div className="empty">No webhook delivery yet (receivers are configured under [[alerts.webhooks]]).</div>
        ) : (
          <table className="grid">
            <thead>
              <tr>
                <th>at</th>
                <th>receiver</th>
                <th>alert</th>
                <th>outcome</th>
                <th>attempt</th>
                <th>HTTP</th>
                <th>error</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id} data-testid="delivery-row">
                  <td>{fmtDateTimeZone(d.at)}</td>
                  <td>{d.receiver}</td>
                  <td>
                    #{d.alert_id} {d.alert_status}
                  </td>
                  <td>
                    <Badge tone={d.outcome === 'delivered' ? 'ok' : d.outcome === 'retrying' ? 'warn' : 'bad'}>{d.outcome}</Badge>
                  </td>
                  <td>{d.attempt}</td>
                  <td>{d.http_status ?? ''}</td>
                  <td>{d.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
    </div>
  );
}
