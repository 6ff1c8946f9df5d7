// Who is on an alert and until when: the note beside a greyed (acknowledged or silenced) alert, in
// the banner and in the alert list.
import type { Alert, Silence } from '../../api/types';
import { fmtDateTimeZone } from '../../lib/format';

export function HandledNote({ alert, silences }: { alert: Alert; silences: Silence[] }) {
  const silence = alert.silenced_by === null ? null : silences.find((s) => s.id === alert.silenced_by);
  return (
    <>
      {alert.silenced_by !== null ? (
        <span className="handled-note" data-testid="alert-silenced">
          {silence
            ? `silenced by ${silence.created_by} until ${fmtDateTimeZone(silence.ends_at)}`
            : `silenced (silence #${alert.silenced_by})`}
        </span>
      ) : null}
      {alert.acked_by !== null ? (
        <span className="handled-note" data-testid="alert-acked">
          acknowledged by {alert.acked_by}
          {alert.acked_at !== null ? ` at ${fmtDateTimeZone(alert.acked_at)}` : ''}, until it resolves
        </span>
      ) : null}
    </>
  );
}
