// Overview: the fleet table (default), or one card per target with its details (?view=cards).
import { useCallback, useEffect, type ReactNode } from 'react';
import { navigate, useLocation } from '../../app/router';
import { fmtAgo } from '../../lib/format';
import { useNow } from '../../lib/hooks';
import { Link, Notice } from '../../ui/ui';
import { CardsOverview } from './CardsOverview';
import { isStalled, parseQuery, queryToSearch, type FleetQuery } from './fleet';
import { FleetTable } from './FleetTable';
import { OverviewNotices, TargetCount } from './OverviewNotices';
import { useOverview } from './useOverview';

function ViewSwitch({ cards, search }: { cards: boolean; search: string }) {
  const p = new URLSearchParams(search);
  p.delete('view');
  const table = p.toString();
  p.set('view', 'cards');
  return (
    <span className="view-switch small" data-testid="view-switch">
      {cards ? <Link href={`/${table ? `?${table}` : ''}`}>Table</Link> : <strong>Table</strong>}
      {' · '}
      {cards ? <strong>Cards</strong> : <Link href={`/?${p.toString()}`}>Cards</Link>}
    </span>
  );
}

export function OverviewPage() {
  const { search } = useLocation();
  const cards = new URLSearchParams(search).get('view') === 'cards';
  const viewSwitch = <ViewSwitch cards={cards} search={search} />;
  return cards ? <CardsOverview viewSwitch={viewSwitch} /> : <FleetOverview search={search} viewSwitch={viewSwitch} />;
}

function FleetOverview({ search, viewSwitch }: { search: string; viewSwitch: ReactNode }) {
  const { rows, error, updatedAt, intervalS } = useOverview();
  const now = useNow(1000);
  const query = parseQuery(search);
  // Typing in the search box replaces the history entry; sorting and filters push one (Back undoes them).
  const onQuery = useCallback(
    (q: FleetQuery, replace = false) => navigate(`/${queryToSearch(q, window.location.search)}`, replace),
    [],
  );

  const stalled = rows?.filter(isStalled) ?? [];
  const down = rows?.filter((r) => r.status === 'down') ?? [];
  const stalledGroups = stalled.reduce((n, r) => n + (r.stalled_groups ?? 0), 0);
  useEffect(() => {
    document.title = stalledGroups > 0 ? `(${stalledGroups} stalled) Poolscope` : 'Poolscope';
  }, [stalledGroups]);

  return (
    <div className="page" data-testid="overview-page">
      <div className="page-head">
        <h1>Targets</h1>
        {updatedAt && !error ? (
          <span className="muted small" title="GET /api/overview every 2 s" data-testid="fleet-updated">
            updated {fmtAgo(updatedAt, now)}
          </span>
        ) : null}
        {viewSwitch}
        {rows ? <TargetCount total={rows.length} down={down.length} /> : null}
      </div>

      <OverviewNotices
        error={error}
        hasData={!!rows}
        updatedAt={updatedAt}
        now={now}
        stalled={stalled.map((r) => ({ name: r.name, groups: r.stalled_groups }))}
      />

      {!rows && !error ? (
        <div className="loading" data-testid="overview-loading">
          Loading targets…
        </div>
      ) : null}

      {rows && rows.length === 0 ? (
        <Notice tone="info" title="No targets configured" testId="overview-empty">
          Poolscope has no database targets to poll. Add one to the backend configuration (or its targets_file / targets_dir).
        </Notice>
      ) : null}

      {rows && rows.length ? <FleetTable rows={rows} query={query} onQuery={onQuery} now={now} intervalS={intervalS} /> : null}
    </div>
  );
}
