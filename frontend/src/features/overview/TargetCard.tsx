// One target on the overview: health, server facts, poll timing and the summary numbers that matter in an incident.
import type { Target } from '../../api/types';
import { targetPath } from '../../app/router';
import { fmtAgo, fmtMs, fmtNum, fmtRateCompact, plural } from '../../lib/format';
import {
  explainPrivilege,
  failedCollectors,
  hasCap,
  isPoolOff,
  pollCadence,
  poolKindLabel,
  poolOffMessage,
  PORT_EXPLANATION,
  portKindLabel,
  queueTimeMode,
  serverLabel,
  shownStatus,
  STALE_TITLE,
  statusTone,
} from '../../lib/domain';
import { Badge, Link, Stat } from '../../ui/ui';

export function TargetCard({ target: t, now }: { target: Target; now: number }) {
  const s = t.summary;
  const poolOff = isPoolOff(t.server);
  const stalled = (s?.stalled_groups ?? 0) > 0;
  const failed = failedCollectors(t.collectors);
  const stale = t.last_poll_at !== null && t.poll_interval_s ? now - t.last_poll_at > Math.max(5, t.poll_interval_s * 5) : false;
  const qmode = queueTimeMode(t.server);
  const shown = shownStatus(t, t.poll_interval_s, now);
  const tone = statusTone({ status: shown });
  // A down target reports a summary of nulls: show nothing rather than a row of dashes.
  const hasSummary = !!s && Object.values(s).some((v) => v !== null);

  return (
    <article
      className={`card target-card ${stalled ? 'card-stalled' : ''} ${t.status === 'down' ? 'card-down' : ''}`}
      data-testid={`target-card-${t.name}`}
      aria-label={`target ${t.name}`}
    >
      <header className="card-head">
        <Link href={targetPath(t.name)} className="card-title" testId="target-link">
          {t.name}
        </Link>
        <Badge tone={tone} testId="target-status" title={shown === 'stale' ? STALE_TITLE : undefined}>
          {shown}
        </Badge>
        {stalled ? (
          <Badge tone="bad" testId="target-stalled">
            {plural(s?.stalled_groups ?? 0, 'stalled group')}
          </Badge>
        ) : null}
        <span
          className={`card-age ${stale ? 'text-warn' : 'muted'}`}
          data-testid="target-poll-age"
          title={t.status === 'down' ? 'Time since the last successful poll' : 'Time since the last poll'}
        >
          {t.status === 'down' && t.last_success_at !== undefined
            ? t.last_success_at
              ? `last success ${fmtAgo(t.last_success_at, now)}`
              : 'no successful poll yet'
            : `polled ${fmtAgo(t.last_poll_at, now)}`}
        </span>
      </header>

      {t.reason ? (
        <div className={t.status === 'down' ? 'card-reason text-bad' : 'card-reason text-warn'} data-testid="target-reason">
          {t.reason}
        </div>
      ) : null}

      <dl className="facts">
        <div>
          <dt>Server</dt>
          <dd data-testid="target-version">
            {t.server ? `${serverLabel(t.server)} ${t.server.version}` : <span className="muted">not connected yet</span>}
          </dd>
        </div>
        <div>
          <dt>thread_handling</dt>
          <dd data-testid="target-thread-handling">
            {t.server ? t.server.thread_handling : '—'}
            {t.server && !poolOff ? (
              <span className="muted small" data-testid="target-pool-kind">
                {' '}
                {poolKindLabel(t.server.pool_kind)}
              </span>
            ) : null}
            {t.server && !poolOff && (t.server.pool_kind ?? 'mariadb') === 'mariadb' ? (
              <Badge tone={qmode.tone === 'warn' ? 'warn' : qmode.tone === 'ok' ? 'ok' : 'muted'} title={qmode.title}>
                {t.server.queue_time_mode ?? 'queue mode ?'}
              </Badge>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Polled via</dt>
          <dd data-testid="target-port" title={t.connection ? PORT_EXPLANATION[t.connection.port_kind] : undefined}>
            {t.connection ? (
              <>
                {portKindLabel(t.connection.port_kind)} {t.connection.host}:{t.connection.port}
                {t.connection.note ? <span className="text-warn"> — {t.connection.note}</span> : null}
              </>
            ) : (
              '—'
            )}
          </dd>
        </div>
        <div>
          <dt>Poll</dt>
          <dd data-testid="target-poll-duration">
            {fmtMs(t.poll_duration_ms)}
            {pollCadence(t) ? <span className="muted"> {pollCadence(t)}</span> : null}
          </dd>
        </div>
      </dl>

      {poolOff ? (
        <div className="pool-off-inline" data-testid="pool-off-notice">
          {poolOffMessage(t.server)}
        </div>
      ) : null}

      {t.server?.notes?.length ? (
        <div className="card-note muted small" data-testid="target-notes">
          {t.server.notes.map((n) => (
            <div key={n}>{n}</div>
          ))}
        </div>
      ) : null}

      {hasSummary ? (
        <div className="stats" data-testid="target-summary">
          {!hasCap(t.server, 'groups') && hasCap(t.server, 'pool_threads') ? (
            <Stat
              label="pool busy / threads"
              value={`${fmtNum(s.pool_threads != null && s.pool_idle_threads != null ? s.pool_threads - s.pool_idle_threads : null)} / ${fmtNum(s.pool_threads)}`}
              testId="summary-pool-threads"
            />
          ) : null}
          {hasCap(t.server, 'queue_depth') ? (
            <Stat
              label="queued (whole pool)"
              value={fmtNum(s.queued_connections)}
              tone={(s.queued_connections ?? 0) > 0 ? 'warn' : undefined}
              testId="summary-queued-pool"
            />
          ) : null}
          {hasCap(t.server, 'groups') ? (
            <>
              <Stat
                label="queued"
                value={fmtNum(s.queue_length)}
                tone={(s.queue_length ?? 0) > 0 ? 'warn' : undefined}
                testId="summary-queue-length"
              />
              <Stat
                label="stalled / groups"
                value={`${fmtNum(s.stalled_groups)} / ${fmtNum(s.groups)}`}
                tone={stalled ? 'bad' : undefined}
                testId="summary-stalled-groups"
              />
            </>
          ) : null}
          <Stat
            label="running / conn."
            value={`${fmtNum(s.threads_running)} / ${fmtNum(s.threads_connected)}`}
            testId="summary-threads"
          />
          <Stat label="QPS" value={fmtRateCompact(s.qps)} testId="summary-qps" />
          <Stat label="TPS" value={fmtRateCompact(s.tps)} testId="summary-tps" />
          <Stat label="active trx" value={fmtNum(s.active_transactions)} testId="summary-active-trx" />
        </div>
      ) : null}

      {t.missing_privileges.length ? (
        <div className="card-warn" data-testid="privilege-warning">
          {t.missing_privileges.map((p) => {
            const e = explainPrivilege(p);
            return (
              <div key={p}>
                <strong>{e.privilege} missing:</strong> {e.impact}.
              </div>
            );
          })}
        </div>
      ) : null}
      {failed.length ? (
        <div className="card-warn" data-testid="collector-failures">
          {plural(failed.length, 'collector')} failing: {failed.map((c) => c.name).join(', ')}
        </div>
      ) : null}
    </article>
  );
}
