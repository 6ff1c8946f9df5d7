// Shown on every page: what is firing now (links to the alert list), and the offer to allow desktop notifications.
import { plural } from '../../lib/format';
import { useState } from 'react';
import { sortAlerts, useAlerts } from '../../api/alerts';
import { notificationsSupported } from '../../api/live';
import { Link } from '../../ui/ui';
import { alertChartsPath } from '../../charts/bands';
import { useNow } from '../../lib/hooks';
import './alerts.css';

export function AlertBanner() {
  const { active } = useAlerts();
  // Links to an alert's charts end at most now: a coarse clock keeps them current.
  const now = useNow(5000);
  const firing = sortAlerts(active.values()).filter((a) => a.status === 'firing');
  const loud = firing.filter((a) => a.silenced_by === null);
  const [permission, setPermission] = useState(() =>
    notificationsSupported() ? Notification.permission : ('unsupported' as const),
  );
  if (!firing.length) return null;
  const critical = loud.some((a) => a.severity === 'critical');
  return (
    <div
      className={`alert-banner ${loud.length ? (critical ? 'alert-banner-critical' : 'alert-banner-warning') : 'alert-banner-muted'}`}
      role="alert"
      data-testid="alert-banner"
      data-count={firing.length}
    >
      <strong data-testid="alert-banner-count">
        {plural(firing.length, 'alert')} firing
        {loud.length < firing.length ? ` (${firing.length - loud.length} silenced)` : ''}
      </strong>
      <ul className="alert-banner-list">
        {firing.slice(0, 3).map((a) => (
          <li key={a.fingerprint} data-testid="alert-banner-item" data-rule={a.rule} data-target={a.target}>
            <span className={`sev sev-${a.severity}`}>{a.severity}</span> <Link href={alertChartsPath(a, now)}>{a.summary}</Link>
            {a.acked_by ? <span className="muted small"> · acknowledged by {a.acked_by}</span> : null}
          </li>
        ))}
        {firing.length > 3 ? <li className="muted">and {firing.length - 3} more</li> : null}
      </ul>
      <span className="alert-banner-actions">
        <Link href="/alerts" testId="alert-banner-link">
          Alert list
        </Link>
        {permission === 'default' ? (
          <button
            type="button"
            className="btn btn-small"
            data-testid="enable-notifications"
            onClick={() => void Notification.requestPermission().then(setPermission)}
          >
            Notify me
          </button>
        ) : null}
      </span>
    </div>
  );
}
