// The live strip at the top of the target page: for each stalled group, who holds its workers now
// (longest running first) and who blocks them.
import type { GroupHolders, Holder, TargetState } from '../../api/types';
import { fmtWholeSeconds, plural } from '../../lib/format';
import { SqlText } from '../../ui/ui';
import './held.css';

const SHOWN = 3;

function who(h: { connection_id: number | null; user?: string | null; host?: string | null }): string {
  return `conn ${h.connection_id ?? '?'} ${h.user ?? '?'}@${h.host ?? '?'}`;
}

function HolderLine({ h }: { h: Holder }) {
  return (
    <li data-testid="holder" data-connection={h.connection_id}>
      <b>{who(h)}</b> {fmtWholeSeconds(h.time_s)} <SqlText sql={h.digest_text ?? h.info} max={90} />
      {h.waits_on ? <span className="muted"> · waits on {h.waits_on}</span> : null}
      {h.blockers.map((b, i) => (
        <span key={i} className="text-warn" data-testid="blocker" data-connection={b.connection_id ?? undefined}>
          {' '}
          · blocked by <b>{who(b)}</b>
          {b.statement ? (
            <>
              {' '}
              running <SqlText sql={b.statement} max={80} />
            </>
          ) : b.kind === 'row_lock' ? (
            ' (idle in its transaction)'
          ) : null}
        </span>
      ))}
    </li>
  );
}

function GroupLine({ g, whole }: { g: GroupHolders; whole: boolean }) {
  const rest = g.holders.length - SHOWN;
  return (
    <div className="holders-group" data-testid="holders-group" data-group={g.group_id ?? 'pool'}>
      <span className="text-bad">
        {whole ? 'The pool' : `Group ${g.group_id}`} {g.stalled ? 'stalled' : 'queueing'}
      </span>
      {g.queue_length ? <span className="muted"> · {plural(g.queue_length, 'request')} queued</span> : null} · held by:
      <ul className="holders-list">
        {g.holders.slice(0, SHOWN).map((h) => (
          <HolderLine key={h.connection_id} h={h} />
        ))}
        {rest > 0 ? <li className="muted">and {plural(rest, 'more connection')}</li> : null}
      </ul>
    </div>
  );
}

/** Nothing unless a group is stalled now (Percona: the whole pool's holders, said so). */
export function HoldersStrip({ state }: { state: TargetState | null }) {
  if (!state) return null;
  const whole = state.holders_scope === 'server';
  const stalledGroups = new Set(state.groups.filter((g) => g.stalled).map((g) => g.group_id));
  const shown = state.holders.filter(
    (g) =>
      g.holders.length && (g.stalled || (g.group_id !== null && stalledGroups.has(g.group_id)) || (whole && stalledGroups.size)),
  );
  if (!shown.length) return null;
  return (
    <section className="holders-strip" data-testid="holders-strip" aria-label="Who holds the stalled groups now">
      {shown.map((g) => (
        <GroupLine key={g.group_id ?? 'pool'} g={g} whole={whole} />
      ))}
      {whole ? (
        <div className="muted small" data-testid="holders-whole-pool">
          This server has no per-group view of its pool: the holders are the whole pool's.
        </div>
      ) : null}
      {state.holders_notes.map((n) => (
        <div key={n} className="muted small" data-testid="holders-note">
          {n}
        </div>
      ))}
    </section>
  );
}
