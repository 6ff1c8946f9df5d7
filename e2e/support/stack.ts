// Where the e2e stack lives and what global setup hands to the tests (written to .run/state.json).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = path.resolve(E2E_DIR, '..');
export const FRONTEND_DIR = path.join(REPO_DIR, 'frontend');
export const VENV_BIN = path.join(REPO_DIR, '.venv', 'bin');
export const PYTHON = path.join(VENV_BIN, 'python');
export const POOLSCOPE = path.join(VENV_BIN, 'poolscope');
/** Captured server output that fixture:// targets replay (backend/dev/poolscope_dev/replay.py). */
export const FIXTURES_DIR = path.join(REPO_DIR, 'backend', 'tests', 'fixtures');
/**
 * One sub-directory per run (`<runner pid>-<start time>`) holding its state.json while the run is
 * live and its logs afterwards, so two runs in one checkout never touch each other's stack.
 */
export const RUNS_DIR = path.join(E2E_DIR, '.run');

/** A sandbox's info() as the dev stack's ready file gives it (contains sandbox-only passwords). */
export interface SandboxInfo {
  host: string;
  port: number;
  extra_port: number;
  socket: string;
  datadir: string;
  pid: number;
  log_file: string;
  thread_handling: string;
  thread_pool_size: number;
  dsns: Record<string, string>;
  users: Record<string, string>;
}

export interface ProcRecord {
  name: string;
  /** pid and process-group id (children are started detached). */
  pid: number;
  log: string;
}

/** The Playwright runner process that owns a run: a pid plus its start time, since pids are reused. */
export interface RunOwner {
  pid: number;
  startTime: string;
}

export interface StackState {
  owner: RunOwner;
  runDir: string;
  logDir: string;
  baseURL: string;
  /** A second backend with users and without anonymous_read: every read needs a login. */
  lockedBaseURL: string;
  /** A third backend with FLEET_SIZE replayed targets from a targets_dir (support/fleet.ts). */
  fleetBaseURL: string;
  tmpDir: string;
  configFile: string;
  /** Target names in the generated config, by role. */
  targets: { poolOn: string; poolOff: string; noProcess: string; unreachable: string };
  unreachablePort: number;
  poolOn: SandboxInfo;
  poolOff: SandboxInfo;
  /** Started by global setup, stopped by teardown in reverse order. */
  processes: ProcRecord[];
  /** mariadbd pids (own sessions, so not covered by the groups above): verified gone at teardown. */
  serverPids: number[];
  waveLoadUntil: number;
}

export const TARGETS = {
  poolOn: 'sandbox',
  poolOff: 'pool-off',
  noProcess: 'noproc',
  unreachable: 'unreachable',
} as const;

/**
 * Targets fed by captured output instead of a server (DSN `fixture://<flavor>/<version>`, replayed
 * by backend/dev/poolscope_dev/replay.py from backend/tests/fixtures/): the flavors that cannot be
 * installed here, run through the real poller, store, API and UI. Name -> fixture directory.
 */
export const FIXTURE_TARGETS = {
  'fx-mariadb-10.11': 'mariadb/10.11',
  'fx-percona-5.7': 'percona/5.7',
  'fx-percona-8.0': 'percona/8.0',
  'fx-percona-8.4': 'percona/8.4',
  'fx-percona-8.4.10': 'percona/8.4.10',
  'fx-alisql-5.6': 'alisql/5.6',
  'fx-alibaba-rds-8.0': 'alibaba-rds/8.0',
  'fx-mysql-enterprise-8.0': 'mysql-enterprise/8.0',
  'fx-mysql-enterprise-8.4': 'mysql-enterprise/8.4',
  'fx-mysql-enterprise-8.4-no-grant': 'mysql-enterprise/8.4-no-grant',
  'fx-mysql-enterprise-9.7': 'mysql-enterprise/9.7',
  'fx-mysql-community-8.0': 'mysql/8.0',
} as const;

export type FixtureTarget = keyof typeof FIXTURE_TARGETS;

export function readState(): StackState {
  const file = process.env.POOLSCOPE_E2E_STATE;
  if (!file || !existsSync(file)) {
    throw new Error(`no e2e stack state (${file ?? 'POOLSCOPE_E2E_STATE unset'}): global setup did not run (use \`npm test\`)`);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as StackState;
}

/** The one target of the locked backend (replayed, so it needs no server). */
export const LOCKED_TARGET: FixtureTarget = 'fx-mariadb-10.11';
