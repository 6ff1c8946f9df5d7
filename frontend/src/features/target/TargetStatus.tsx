// Target page header and the explanatory notices (down, pool off, stalls, privileges, collector failures).
import type { CollectorStatus, GroupState, ServerInfo, Target } from '../../api/types';
import type { LiveStatus } from '../../api/live';
import { LiveIndicator } from '../../app/LiveIndicator';
import { fmtAgo, fmtDateTimeZone, fmtMs, fmtNum, plural } from '../../lib/format';
import {
  explainPrivilege,
  failedCollectors,
  pollCadence,
  POOL_OFF_DETAIL,
  PORT_EXPLANATION,
  poolKindLabel,
  poolOffMessage,
  portKindLabel,
  queueTimeMode,
  serverLabel,
  shownStatus,
  STALE_TITLE,
  stallLabel,
  statusTone,
} from '../../lib/domain';
import { Badge, Notice } from '../../ui/ui';

export function TargetHeader({ target: t, now, liveStatus }: { target: Target; now: number; liveStatus: LiveStatus }) {
  const qm = queueTimeMode(t.server);
  const shown = shownStatus(t, t.poll_interval_s, now);
  return (
    <div className="target-head" data-testid="target-header">
      <div className="target-head-row">
        <h1 data-testid="target-name">{t.name}</h1>
        <Badge tone={statusTone({ status: shown })} testId="target-status" title={shown === 'stale' ? STALE_TITLE : undefined}>
          {shown}
        </Badge>
        {t.server ? (
          <span data-testid="target-version">
            {serverLabel(t.server)} <span className="mono">{t.server.version}</span>
          </span>
        ) : (
          <span className="muted">server not identified yet</span>
        )}
        {t.server ? (
          <span className="mono" data-testid="target-thread-handling">
            {t.server.thread_handling}
          </span>
        ) : null}
        {t.server?.pool_enabled ? (
          <Badge tone="muted" testId="target-pool-kind" title={t.server.edition ?? undefined}>
            {poolKindLabel(t.server.pool_kind)}
          </Badge>
        ) : null}
        {t.server?.pool_enabled && (t.server.pool_kind ?? 'mariadb') === 'mariadb' ? (
          <Badge tone={qm.tone === 'ok' ? 'ok' : qm.tone === 'warn' ? 'warn' : 'muted'} title={qm.title} testId="queue-time-mode">
            {qm.label}
          </Badge>
        ) : null}
        <LiveIndicator status={liveStatus} />
      </div>
      <div className="target-head-row small">
        {t.connection ? (
          <span data-testid="target-port" title={PORT_EXPLANATION[t.connection.port_kind]}>
            via <strong>{portKindLabel(t.connection.port_kind)}</strong>{' '}
            <span className="mono">
              {t.connection.host}:{t.connection.port}
            </span>
            {t.connection.port_kind === 'port' ? (
              <span className="text-warn">
                {' '}
                — monitoring queries share the pool queue{t.connection.note ? `: ${t.connection.note}` : ''}
              </span>
            ) : t.connection.note ? (
              <span className="muted"> — {t.connection.note}</span>
            ) : null}
          </span>
        ) : null}
        <span data-testid="target-poll-age">last poll {fmtAgo(t.last_poll_at, now)}</span>
        <span data-testid="target-poll-duration">
          poll took {fmtMs(t.poll_duration_ms)}
          {pollCadence(t) ? ` · ${pollCadence(t)}` : ''}
        </span>
      </div>
    </div>
  );
}

export function DownNotice({ target: t, now, hasState }: { target: Target; now: number; hasState: boolean }) {
  if (t.status === 'starting') {
    return (
      <Notice tone="info" title="Connecting to the target…" testId="target-starting">
        {t.reason ?? 'Waiting for the first successful poll.'}
      </Notice>
    );
  }
  if (t.status !== 'down') return null;
  // last_poll_at is the last attempt; older backends without last_success_at only have that.
  const lastOk = t.last_success_at !== undefined ? t.last_success_at : t.last_poll_at;
  return (
    <Notice tone="bad" title="Target is down" testId="target-down">
      <div data-testid="target-down-reason">{t.reason ?? 'No reason reported.'}</div>
      <div className="muted">
        {lastOk
          ? `Last successful poll: ${fmtDateTimeZone(lastOk)} (${fmtAgo(lastOk, now)}).${hasState ? ' Current-state panels below show that poll.' : ''}`
          : 'No successful poll yet.'}
      </div>
    </Notice>
  );
}

export function PoolOffNotice({ server }: { server: ServerInfo | null }) {
  // The backend words enabling per flavor (poolscope/flavors.py); MariaDB's is the fallback.
  const hint = server?.enable_hint;
  return (
    <Notice tone="info" title={poolOffMessage(server)} testId="pool-off-notice">
      {hint ? (
        <>
          <span data-testid="pool-off-enable-hint">{hint}</span> Per-group data (groups, queues, stalls) needs the pool; thread,
          throughput, session and transaction metrics below are still collected.
        </>
      ) : (
        POOL_OFF_DETAIL
      )}
      <pre className="snippet">
        {server?.enable_snippet ??
          `[mysqld]\nthread_handling         = pool-of-threads\nthread_pool_exact_stats = ON\nextra_port              = 3307   # admin/monitoring port outside the pool`}
      </pre>
    </Notice>
  );
}

/**
 * The pool runs but this user cannot read it (MySQL Enterprise without SELECT on performance_schema):
 * say so, with the GRANT, instead of "pool off" and advice to turn on a pool that is already on.
 */
export function GrantNeededNotice({ server }: { server: ServerInfo | null }) {
  const grant = server?.pool_grant_needed;
  if (!grant) return null;
  return (
    <Notice tone="warn" title={`Thread pool on — grant ${grant} to read it`} testId="pool-grant-needed">
      thread_handling={server.thread_handling}: the {poolKindLabel(server.pool_kind)} is running, but this monitoring user cannot
      read its tables, so there are no groups, queues or stalls to show yet. Poolscope retries every minute and picks the grant up
      without a restart. <code className="snippet-inline">GRANT {grant} TO &apos;poolscope&apos;@&apos;%&apos;;</code>
      <span className="muted"> (use the monitoring user&apos;s actual name)</span>
    </Notice>
  );
}

/** What the user should know about how this server is read: unknown/future version, derived pool, replay. */
export function ServerNotes({ server }: { server: ServerInfo | null }) {
  const notes = server?.notes ?? [];
  if (!notes.length) return null;
  return (
    <Notice tone="info" title="About this server" testId="server-notes">
      {notes.map((n) => (
        <div key={n} data-testid="server-note">
          {n}
        </div>
      ))}
    </Notice>
  );
}

export function StalledBanner({ groups }: { groups: GroupState[] }) {
  const stalled = groups.filter((g) => g.stalled);
  if (!stalled.length) return null;
  return (
    <Notice tone="bad" title={`${plural(stalled.length, 'thread group')} stalled`} testId="stalled-banner">
      {stalled.map((g) => (
        <div key={g.group_id}>
          group {g.group_id}: {stallLabel(g.stall_reason)} — queue {fmtNum(g.queue_length)}
          {g.oldest_queued_ms !== null ? `, oldest waiting ${fmtMs(g.oldest_queued_ms)}` : ''}
        </div>
      ))}
    </Notice>
  );
}

export function PrivilegeWarning({ missing }: { missing: string[] }) {
  if (!missing.length) return null;
  return (
    <Notice tone="warn" title="Monitoring user lacks privileges" testId="privilege-warning">
      {missing.map((p) => {
        const e = explainPrivilege(p);
        return (
          <div key={p} className="priv" data-testid={`privilege-${e.privilege}`}>
            <strong>{e.privilege} missing:</strong> {e.impact}. <code className="snippet-inline">{e.grant}</code>
            <span className="muted"> (use the monitoring user's actual name)</span>
          </div>
        );
      })}
    </Notice>
  );
}

export function CollectorHealth({ collectors }: { collectors: CollectorStatus[] }) {
  const failed = failedCollectors(collectors);
  if (!failed.length) return null;
  return (
    <Notice tone="warn" title={`${plural(failed.length, 'collector')} failing`} testId="collector-health">
      {failed.map((c) => (
        <div key={c.name}>
          <span className="mono">{c.name}</span>: {c.error ?? 'failed without a message'}
        </div>
      ))}
      <div className="muted">Fields fed by a failed collector show as “—”; the rest of the poll is unaffected.</div>
    </Notice>
  );
}

export function CollectorsTable({ collectors }: { collectors: CollectorStatus[] }) {
  if (!collectors.length) return <div className="empty">No collector results yet.</div>;
  return (
    <table className="grid" data-testid="collectors-table">
      <thead>
        <tr>
          <th>collector</th>
          <th>status</th>
          <th className="num">took</th>
          <th>detail</th>
        </tr>
      </thead>
      <tbody>
        {collectors.map((c) => (
          <tr key={c.name} className={!c.ok && !c.skipped ? 'row-warn' : c.skipped ? 'row-dim' : ''}>
            <td className="mono">{c.name}</td>
            <td>
              {c.skipped ? (
                <Badge tone="muted">skipped</Badge>
              ) : c.ok ? (
                <Badge tone="ok">ok</Badge>
              ) : (
                <Badge tone="bad">failed</Badge>
              )}
            </td>
            <td className="num">{fmtMs(c.duration_ms)}</td>
            <td className="small cell-wrap">{c.skipped ?? c.error ?? c.note ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
