// thread_pool_stall_limit as the backend read it: its unit depends on the flavor (MySQL Enterprise
// counts 10 ms units, MariaDB and Percona ms; backend/poolscope/flavors.py), so the UI never reads
// the bare variable as ms.
import type { PoolSummary } from '../../api/types';
import { fmtNum } from '../../lib/format';

/** The stall limit in ms, or null when the backend could not tell its unit. */
export function stallLimitMs(pool: PoolSummary | null | undefined): number | null {
  return pool?.stall_limit_ms ?? null;
}

/** "60 ms"; else the raw value with its unit ("6 ×10 ms"); null when unknown. */
export function stallLimitText(pool: PoolSummary | null | undefined): string | null {
  const ms = stallLimitMs(pool);
  if (ms !== null) return `${fmtNum(ms)} ms`;
  return pool?.stall_limit_raw ?? null;
}
