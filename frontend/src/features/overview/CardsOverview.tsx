// The overview's card view (?view=cards): one card per monitored target with its details, updated live.
import { useEffect, type ReactNode } from 'react';
import { useNow } from '../../lib/hooks';
import { LiveIndicator } from '../../app/LiveIndicator';
import { Notice } from '../../ui/ui';
import { OverviewNotices, TargetCount } from './OverviewNotices';
import { TargetCard } from './TargetCard';
import { useTargets } from './useTargets';

export function CardsOverview({ viewSwitch }: { viewSwitch: ReactNode }) {
  const { targets, error, liveStatus, updatedAt } = useTargets();
  const now = useNow(1000);

  useEffect(() => {
    const stalled = targets?.reduce((n, t) => n + (t.summary?.stalled_groups ?? 0), 0) ?? 0;
    document.title = stalled > 0 ? `(${stalled} stalled) Poolscope` : 'Poolscope';
  }, [targets]);

  const totalStalled = targets?.filter((t) => (t.summary?.stalled_groups ?? 0) > 0) ?? [];
  const down = targets?.filter((t) => t.status === 'down') ?? [];

  return (
    <div className="page" data-testid="overview-page">
      <div className="page-head">
        <h1>Targets</h1>
        <LiveIndicator status={liveStatus} />
        {viewSwitch}
        {targets ? <TargetCount total={targets.length} down={down.length} /> : null}
      </div>

      <OverviewNotices
        error={error}
        hasData={!!targets}
        updatedAt={updatedAt}
        now={now}
        stalled={totalStalled.map((t) => ({ name: t.name, groups: t.summary?.stalled_groups }))}
      />

      {!targets && !error ? (
        <div className="loading" data-testid="overview-loading">
          Loading targets…
        </div>
      ) : null}

      {targets && targets.length === 0 ? (
        <Notice tone="info" title="No targets configured" testId="overview-empty">
          Poolscope has no database targets to poll. Add one to the backend configuration and restart it.
        </Notice>
      ) : null}

      {targets && targets.length ? (
        <div className="card-grid" data-testid="target-list">
          {targets.map((t) => (
            <TargetCard key={t.name} target={t} now={now} />
          ))}
        </div>
      ) : null}
    </div>
  );
}
