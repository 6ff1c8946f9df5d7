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
/** Run state and logs of the current / last run; logs stay after teardown for post-mortems. */
export const RUN_DIR = path.join(E2E_DIR, '.run');
export const STATE_FILE = path.join(RUN_DIR, 'state.json');

/** What `python -m poolscope.devtools.sandbox --info-file` writes (contains sandbox-only passwords). */
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

export interface StackState {
  baseURL: string;
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

export function readState(): StackState {
  const file = process.env.POOLSCOPE_E2E_STATE ?? STATE_FILE;
  if (!existsSync(file)) {
    throw new Error(`no e2e stack state at ${file}: global setup did not run (run the suite with \`npm test\`)`);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as StackState;
}
