// Shown on every page: what is firing now (links to the alert list), and the offer to allow desktop notifications.
import { plural } from '../../lib/format';
import { useState } from 'react';
import { handled, sortAlerts, useAlerts } from '../../api/alerts';
import { notificationsSupported } from '../../api/live';
import { Link } from '../../ui/ui';
import { alertChartsPath } from '../../charts/bands';
import { useNow } from '../../lib/hooks';
import { HandledNote } from './Handled';
import './alerts.css';

export function AlertBanner() {
  const { active, silences } = useAlerts();
  // Links to an alert's charts end at most now: a coarse clock keeps them current.
  const now = useNow(5000);
  // Unhandled first (sortAlerts): an acknowledged or silenced alert never leads the banner.
  const firing = sortAlerts(active.values()).filter((a) => a.status === 'firing');
  const loud = firing.filter((a) => !handled(a));
  const silenced = firing.filter((a) => a.silenced_by !== null).length;
  const acked = firing.filter((a) => a.acked_by !== null && a.silenced_by === null).length;
  const [permission, setPermission] = useState(() =>
    notificationsSupported() ? Notification.permission : ('unsupported' as const),
  );
  if (!firing.length) return null;
  const critical = loud.some((a) => a.severity === 'critical');
  const quiet = [silenced ? `${silenced} silenced` : '', acked ? `${acked} acknowledged` : ''].filter(Boolean).join(', ');
  return (
    <div
      className={`alert-banner ${loud.length ? (critical ? 'alert-banner-critical' : 'alert-banner-warning') : 'alert-banner-muted'}`}
      // Only what nobody handles yet is announced; handled ones are a status.
      role={loud.length ? 'alert' : 'status'}
      data-testid="alert-banner"
      data-count={firing.length}
      data-loud={loud.length}
    >
      <strong data-testid="alert-banner-count">
        {plural(firing.length, 'alert')} firing
        {quiet ? ` (${quiet})` : ''}
      </strong>
      <ul className="alert-banner-list">
        {firing.slice(0, 3).map((a) => (
          <li
            key={a.fingerprint}
            className={handled(a) ? 'alert-handled' : undefined}
            data-testid="alert-banner-item"
            data-rule={a.rule}
            data-target={a.target}
            data-handled={handled(a)}
          >
            <span className={`sev sev-${a.severity}`}>{a.severity}</span> <Link href={alertChartsPath(a, now)}>{a.summary}</Link>
            {handled(a) ? (
              <span className="muted small">
                {' · '}
                <HandledNote alert={a} silences={silences} />
              </span>
            ) : null}
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
