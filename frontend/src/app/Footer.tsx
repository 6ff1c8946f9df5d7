// Page footer: which Poolscope answers (its version, from /api/health), for bug reports and upgrades.
import { useEffect, useState } from 'react';
import { getJson } from '../api/client';
import type { Health } from '../api/types';

export function Footer() {
  const [version, setVersion] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    getJson<Health>('/api/health', abort.signal)
      .then((h) => setVersion(h.version ?? null))
      // No version to show is not worth a message: the pages say when the API is unreachable.
      .catch(() => undefined);
    return () => abort.abort();
  }, []);
  return (
    <footer className="app-footer muted small" data-testid="app-footer">
      Poolscope{version ? <span data-testid="app-version"> {version}</span> : null}
    </footer>
  );
}
