// Page footer: which Poolscope answers (its version, from /api/health), for bug reports and upgrades.
import { useQuery } from '@tanstack/react-query';
import { healthQuery } from '../api/queries';

export function Footer() {
  // No version to show is not worth a message: the pages say when the API is unreachable.
  const version = useQuery(healthQuery).data?.version ?? null;
  return (
    <footer className="app-footer muted small" data-testid="app-footer">
      Poolscope{version ? <span data-testid="app-version"> {version}</span> : null}
    </footer>
  );
}
