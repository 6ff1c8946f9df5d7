// Global setup: two sandbox MariaDB servers, `poolscope serve` on a free port with four targets, and a waves load;
// plus a second, locked `poolscope serve` (reads need a login) with one replayed target. All of it runs
// under one process, the dev stack (`python -m poolscope_dev stack`, backend/dev/poolscope_dev/stack.py).
//
// Everything binds 127.0.0.1, lives in a fresh temp dir and is stopped by global-teardown.ts; a run
// killed half-way is cleaned up by the next run (see stopLeftovers). The UI comes from frontend/dist,
// rebuilt here when it is missing or older than its sources (POOLSCOPE_E2E_SKIP_BUILD=1 skips that),
// and is served from a private copy in the run's directory.
import { randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FullConfig } from '@playwright/test';
import {
  cmdline,
  freePort,
  groupMembers,
  ProcessExited,
  runChecked,
  startProcess,
  startTime,
  stopAll,
  tail,
  waitFor,
  type Spawned,
} from './support/procs';
import { FLEET_DOWN, FLEET_STALLED, fleetFiles } from './support/fleet';
import {
  FIXTURE_TARGETS,
  FIXTURES_DIR,
  FRONTEND_DIR,
  LOCKED_TARGET,
  POOLSCOPE,
  PYTHON,
  REPO_DIR,
  RUNS_DIR,
  TARGETS,
  type RunOwner,
  type SandboxInfo,
  type StackState,
} from './support/stack';

/** Two sandboxes, then two backends, each bounded by the stack itself (backend/dev/poolscope_dev/stack.py). */
const STACK_START_MS = 420_000;
const BACKEND_READY_MS = 60_000;
/** The fleet's first polls (support/fleet.ts: a few hundred targets at once). */
const FLEET_READY_MS = 180_000;
const BUILD_MS = 240_000;
/** Upper bound on the background load; teardown stops it much earlier. */
const WAVE_LOAD_S = 1500;
const WAVE_CONNECTIONS = 16;
const UNREACHABLE_PORT = 1;

export default async function globalSetup(_config: FullConfig): Promise<void> {
  if (!existsSync(PYTHON) || !existsSync(POOLSCOPE)) {
    throw new Error(`no Python venv with poolscope at ${path.dirname(PYTHON)}: run \`make install\` in ${REPO_DIR}`);
  }
  const owner: RunOwner = { pid: process.pid, startTime: startTime(process.pid) };
  const runDir = path.join(RUNS_DIR, `${owner.pid}-${owner.startTime}`);
  const logDir = path.join(runDir, 'logs');
  const stateFile = path.join(runDir, 'state.json');
  mkdirSync(logDir, { recursive: true });
  await stopLeftovers(runDir);
  pruneOldRuns(runDir);

  // Serve a private copy of the build: a concurrent `npm run build` (which empties dist/) must not
  // pull the UI from under a running suite.
  const staticDir = path.join(runDir, 'ui');
  cpSync(ensureFrontendBuilt(), staticDir, { recursive: true });

  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-e2e-'));
  const started: Spawned[] = [];
  const serverPids: number[] = [];
  // Written before anything starts, then after each step, so a crash mid-setup is still cleaned up.
  const partial = () =>
    writeFileSync(stateFile, JSON.stringify({ owner, runDir, logDir, tmpDir, processes: started, serverPids }, null, 2), {
      mode: 0o600,
    });
  partial();

  try {
    // Port 1 (tcpmux) on loopback: closed, and outside the ephemeral range that other sandboxes'
    // free-port picks come from, so nothing starts listening there during the run.
    const unreachablePort = UNREACHABLE_PORT;
    await assertClosed(unreachablePort);
    const listenPort = await freePort();
    const baseURL = `http://127.0.0.1:${listenPort}`;
    const configFile = path.join(tmpDir, 'poolscope.toml');
    const users = e2eUsers();
    // A second backend as a production install is set up: users and no anonymous_read, so every
    // read needs a login (e2e/tests/read-login.spec.ts). One replayed target; nothing else needed.
    const lockedPort = await freePort();
    const lockedBaseURL = `http://127.0.0.1:${lockedPort}`;
    const lockedConfig = path.join(tmpDir, 'poolscope-locked.toml');
    const usersToml = renderUsers(users);
    // A third backend: a few hundred replayed targets from a targets_dir, for the fleet table.
    const fleetPort = await freePort();
    const fleetBaseURL = `http://127.0.0.1:${fleetPort}`;
    const fleetConfig = path.join(tmpDir, 'poolscope-fleet.toml');
    const fleet = fleetFiles({ tmpDir, staticDir, listenPort: fleetPort });
    // The served backends replay fixture:// targets from backend/tests/fixtures (a dev facility).
    const serve = (name: string, config: string, url: string) => ({
      name,
      argv: ['${python}', '-m', 'poolscope_dev', 'poolscope', '--fixtures', FIXTURES_DIR, '--', 'serve', '--config', config],
      log: path.join(logDir, `${name}.log`),
      cwd: tmpDir,
      ready_url: `${url}/api/health`,
    });
    // One process, the dev stack (backend/dev/poolscope_dev/stack.py), starts both sandboxes, writes
    // the configs with their DSNs, and runs both backends and the waves load; stopping it stops all.
    const spec = {
      dir: tmpDir,
      hours: 1,
      sandboxes: {
        'pool-on': { thread_pool_size: 2, stall_limit_ms: 500 },
        'pool-off': { thread_handling: 'one-thread-per-connection', extra_port: 0 },
      },
      files: {
        [configFile]: renderConfig({ tmpDir, staticDir, listenPort, unreachablePort }) + usersToml,
        [lockedConfig]: renderLockedConfig({ tmpDir, staticDir, listenPort: lockedPort }) + usersToml,
        [fleetConfig]: fleet.config,
        ...fleet.files,
      },
      processes: [
        serve('poolscope-serve', configFile, baseURL),
        serve('poolscope-serve-locked', lockedConfig, lockedBaseURL),
        serve('poolscope-serve-fleet', fleetConfig, fleetBaseURL),
        {
          name: 'loadgen-waves',
          argv: [
            '${python}',
            '-m',
            'poolscope_dev.loadgen',
            '--dsn',
            '${pool-on.dsns.sbtest}sbtest',
            '--mode',
            'waves',
            '--duration',
            String(WAVE_LOAD_S),
            '--connections',
            String(WAVE_CONNECTIONS),
            '--wave-period',
            '20',
          ],
          log: path.join(logDir, 'loadgen-waves.log'),
        },
      ],
    };
    const specFile = path.join(tmpDir, 'stack.json');
    writeFileSync(specFile, JSON.stringify(spec, null, 2), { mode: 0o600 });
    const waveLoadUntil = Date.now() / 1000 + WAVE_LOAD_S;
    const stack = await startStack(specFile, path.join(tmpDir, 'ready.json'), logDir, tmpDir, started, partial);
    const poolOn = stack.sandboxes['pool-on'];
    const poolOff = stack.sandboxes['pool-off'];
    serverPids.push(poolOn.pid, poolOff.pid);
    partial();
    await waitForBackend(baseURL, started[0]);
    await waitForHealth(lockedBaseURL, started[0]);
    await waitForHealth(fleetBaseURL, started[0]);
    await waitForFleet(fleetBaseURL, started[0]);

    const state: StackState = {
      owner,
      runDir,
      logDir,
      baseURL,
      lockedBaseURL,
      fleetBaseURL,
      tmpDir,
      configFile,
      targets: { ...TARGETS },
      unreachablePort,
      poolOn,
      poolOff,
      processes: started,
      serverPids,
      waveLoadUntil,
    };
    writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
    // Workers inherit the environment of the runner process.
    process.env.POOLSCOPE_E2E_STATE = stateFile;
    process.env.POOLSCOPE_E2E_BASE_URL = baseURL;
    console.log(`[e2e] poolscope at ${baseURL}; sandboxes ${poolOn.port} (pool on) / ${poolOff.port} (pool off); logs in ${logDir}`);
  } catch (err) {
    await stopAll(started, serverPids);
    for (const dir of ['pool-on', 'pool-off']) keepServerLogs(tmpDir, dir, logDir);
    rmSync(tmpDir, { recursive: true, force: true });
    rmSync(stateFile, { force: true });
    throw err;
  }
}

/** ${pool-on.…} / ${pool-off.…}: filled in by the dev stack once the sandboxes are up. */
function renderConfig(o: { tmpDir: string; staticDir: string; listenPort: number; unreachablePort: number }): string {
  const q = (s: string) => JSON.stringify(s); // a TOML basic string is a JSON string for these values
  const target = (name: string, dsn: string, extra = '') => `\n[[targets]]\nname = ${q(name)}\ndsn = ${q(dsn)}\n${extra}`;
  return [
    '# Generated by e2e/global-setup.ts for one test run (sandbox-only credentials).',
    'poll_interval_s = 1',
    `store_url = ${q(`sqlite+aiosqlite:///${path.join(o.tmpDir, 'poolscope.db')}`)}`,
    'listen_host = "127.0.0.1"',
    `listen_port = ${o.listenPort}`,
    `static_dir = ${q(o.staticDir)}`,
    // Like `make demo`: the specs read without logging in and log in for changes. The locked
    // backend below covers reads that need a login.
    'anonymous_read = true',
    // Swagger UI from Poolscope's own files, under the same Content-Security-Policy (tests/headers.spec.ts).
    'api_docs = true',
    // admin_dsn: the separate credential that applies recommendations (SUPER, CONNECTION ADMIN).
    target(TARGETS.poolOn, '${pool-on.dsns.poolscope_monitor}', `admin_dsn = ${q('${pool-on.dsns.poolscope_admin}')}\n`),
    target(TARGETS.poolOff, '${pool-off.dsns.poolscope_monitor}'),
    target(TARGETS.noProcess, '${pool-on.dsns.poolscope_noproc}'),
    target(
      TARGETS.unreachable,
      `mysql://poolscope_monitor:unused@127.0.0.1:${o.unreachablePort}/`,
      'connect_timeout_s = 2\n',
    ),
    // Flavors that cannot be installed here, replayed from backend/tests/fixtures (test facility).
    ...Object.entries(FIXTURE_TARGETS).map(([name, dir]) => target(name, `fixture://${dir}`)),
    // Every stall alert takes its own snapshot: an earlier spec's load can stall pool-on, and
    // within the default 300 s cooldown the next stall alert links none (incidents.spec.ts).
    '\n[snapshots]\nauto_cooldown_s = 0',
    '',
  ].join('\n');
}

/** The locked backend: users (renderUsers), no anonymous_read, one replayed target, its own store. */
function renderLockedConfig(o: { tmpDir: string; staticDir: string; listenPort: number }): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    '# Generated by e2e/global-setup.ts: every read needs a login here.',
    'poll_interval_s = 1',
    `store_url = ${q(`sqlite+aiosqlite:///${path.join(o.tmpDir, 'poolscope-locked.db')}`)}`,
    'listen_host = "127.0.0.1"',
    `listen_port = ${o.listenPort}`,
    `static_dir = ${q(o.staticDir)}`,
    `\n[[targets]]\nname = ${q(LOCKED_TARGET)}\ndsn = ${q(`fixture://${FIXTURE_TARGETS[LOCKED_TARGET]}`)}`,
    '',
  ].join('\n');
}

/**
 * The e2e users (`viewer`, `operator`): passwords from POOLSCOPE_E2E_VIEWER_PW / _OPERATOR_PW, or random
 * for this run. They are put back into this process's environment, which the workers inherit
 * (e2e/support/auth.ts reads them there).
 */
function e2eUsers(): { name: string; role: string; password: string }[] {
  const out = [];
  for (const role of ['viewer', 'operator']) {
    const key = `POOLSCOPE_E2E_${role.toUpperCase()}_PW`;
    const password = process.env[key] || randomBytes(18).toString('base64url');
    process.env[key] = password;
    out.push({ name: role, role, password });
  }
  return out;
}

/** The product's own hash (`poolscope hash-password`, password on stdin), so the format has one home. */
function passwordHash(password: string): string {
  return runChecked(POOLSCOPE, ['hash-password'], { timeoutMs: 180_000, input: `${password}\n` }).trim();
}

function renderUsers(users: { name: string; role: string; password: string }[]): string {
  const q = (s: string) => JSON.stringify(s);
  return users
    .map((u) => `\n[[users]]\nname = ${q(u.name)}\nrole = ${q(u.role)}\npassword_hash = ${q(passwordHash(u.password))}\n`)
    .join('');
}

/** Copy a sandbox's MariaDB error log and install log out of the temp dir (which is deleted). */
function keepServerLogs(tmpDir: string, dir: string, logDir: string, attempt = 0): void {
  const suffix = attempt > 1 ? `.attempt${attempt}` : '';
  for (const name of ['mariadb.err', 'install-db.log']) {
    const src = path.join(tmpDir, dir, name);
    if (existsSync(src)) copyFileSync(src, path.join(logDir, `${dir}-${name}${suffix}`));
  }
}

interface StackReady {
  sandboxes: Record<string, SandboxInfo>;
  processes: Record<string, number>;
}

/**
 * Start the dev stack and wait for its ready file. One retry, for a stack that ended while
 * starting (a sandbox exiting on a crowded machine); a hang is not retried.
 */
async function startStack(
  specFile: string,
  readyFile: string,
  logDir: string,
  tmpDir: string,
  started: Spawned[],
  partial: () => void,
): Promise<StackReady> {
  const args = ['-m', 'poolscope_dev', 'stack', '--spec', specFile, '--ready-file', readyFile];
  for (let attempt = 1; ; attempt++) {
    const proc = startProcess('dev-stack', PYTHON, args, path.join(logDir, 'dev-stack.log'), REPO_DIR);
    started.splice(0, started.length, proc);
    partial();
    try {
      return await waitFor(
        'the dev stack (sandboxes, backends, load)',
        () => {
          if (!groupMembers(proc.pid).length) throw new ProcessExited(`the dev stack exited\n${tail(proc.log)}`);
          return existsSync(readyFile) ? (JSON.parse(readFileSync(readyFile, 'utf8')) as StackReady) : undefined;
        },
        STACK_START_MS,
        () => tail(proc.log),
      );
    } catch (err) {
      for (const dir of ['pool-on', 'pool-off']) keepServerLogs(tmpDir, dir, logDir, attempt);
      if (attempt >= 2 || !(err instanceof ProcessExited)) throw err;
      console.warn(`[e2e] the dev stack exited while starting; retrying once (logs in ${logDir})`);
    }
  }
}

interface TargetLite {
  name: string;
  status: string;
}

async function waitForBackend(baseURL: string, serve: Spawned): Promise<void> {
  // `sandbox` up is what the specs need first; the others must have had their first poll too,
  // so no spec ever sees a target still "starting".
  await waitFor(
    `poolscope at ${baseURL} to report ${TARGETS.poolOn} up and every target polled`,
    async () => {
      if (!groupMembers(serve.pid).length) throw new ProcessExited(`the dev stack exited\n${tail(serve.log)}`);
      const res = await fetch(`${baseURL}/api/targets`, { signal: AbortSignal.timeout(5_000) });
      if (!res.ok) return undefined;
      const list = (await res.json()) as TargetLite[];
      const by = new Map(list.map((t) => [t.name, t.status]));
      const ready =
        by.get(TARGETS.poolOn) === 'up' &&
        by.get(TARGETS.poolOff) === 'up' &&
        by.get(TARGETS.noProcess) === 'up' &&
        by.get(TARGETS.unreachable) === 'down' &&
        Object.keys(FIXTURE_TARGETS).every((name) => by.get(name) === 'up');
      return ready ? true : undefined;
    },
    BACKEND_READY_MS,
    () => tail(serve.log),
  );
  const index = await fetch(`${baseURL}/`, { signal: AbortSignal.timeout(5_000) });
  const html = await index.text();
  if (!index.ok || !html.includes('<div id="root">')) {
    throw new Error(`poolscope does not serve the built UI at ${baseURL}/ (HTTP ${index.status})\n${tail(serve.log)}`);
  }
}

/** A backend besides the main one (the locked one, the fleet): its /api/health answers. */
async function waitForHealth(baseURL: string, serve: Spawned): Promise<void> {
  await waitFor(
    `the poolscope at ${baseURL} to answer`,
    async () => {
      if (!groupMembers(serve.pid).length) throw new ProcessExited(`the dev stack exited\n${tail(serve.log)}`);
      const res = await fetch(`${baseURL}/api/health`, { signal: AbortSignal.timeout(5_000) });
      return res.ok ? true : undefined;
    },
    BACKEND_READY_MS,
    () => tail(serve.log),
  );
}

/** The fleet backend lists every target and has seen its stalled and its down one: what the specs start from. */
async function waitForFleet(baseURL: string, serve: Spawned): Promise<void> {
  await waitFor(
    `the fleet poolscope at ${baseURL} to see ${FLEET_STALLED} stalled and ${FLEET_DOWN} down`,
    async () => {
      if (!groupMembers(serve.pid).length) throw new ProcessExited(`the dev stack exited\n${tail(serve.log)}`);
      const res = await fetch(`${baseURL}/api/overview`, { signal: AbortSignal.timeout(10_000) });
      if (!res.ok) return undefined;
      const { targets } = (await res.json()) as { targets: { name: string; status: string; stalled_groups: number | null }[] };
      const by = new Map(targets.map((t) => [t.name, t]));
      return (by.get(FLEET_STALLED)?.stalled_groups ?? 0) > 0 && by.get(FLEET_DOWN)?.status === 'down' ? true : undefined;
    },
    FLEET_READY_MS,
    () => tail(serve.log),
  );
}

/** The `unreachable` target must really be unreachable: refuse to run if something listens there. */
function assertClosed(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port, timeout: 2_000 });
    sock.once('connect', () => {
      sock.destroy();
      reject(new Error(`something listens on 127.0.0.1:${port}; the 'unreachable' target needs it closed`));
    });
    sock.once('error', () => resolve());
    sock.once('timeout', () => {
      sock.destroy();
      resolve();
    });
  });
}

/** The newest mtime under `dir` (skipping node_modules / dist). */
function newestMtime(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(p)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    newest = Math.max(newest, newestMtime(path.join(p, entry)));
  }
  return newest;
}

/**
 * The UI the backend serves is the production build. Rebuild it when it is missing or older than
 * any source, so a run never tests a stale UI (`make test-e2e` builds first, so this is then a no-op).
 */
function ensureFrontendBuilt(): string {
  const override = process.env.POOLSCOPE_E2E_STATIC_DIR;
  if (override) return path.resolve(override);
  const dist = path.join(FRONTEND_DIR, 'dist');
  const index = path.join(dist, 'index.html');
  if (process.env.POOLSCOPE_E2E_SKIP_BUILD === '1') {
    if (!existsSync(index)) throw new Error(`POOLSCOPE_E2E_SKIP_BUILD=1 but ${index} does not exist: run \`make build\``);
    return dist;
  }
  const sources = ['src', 'index.html', 'package.json', 'package-lock.json', 'vite.config.ts', 'public']
    .map((p) => path.join(FRONTEND_DIR, p))
    .filter((p) => existsSync(p));
  const newestSource = Math.max(...sources.map(newestMtime));
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource) return dist;
  if (!existsSync(path.join(FRONTEND_DIR, 'node_modules'))) {
    throw new Error(`frontend/node_modules is missing: run \`make install\` (or \`make build\`) in ${REPO_DIR}`);
  }
  console.log(`[e2e] frontend/dist is ${existsSync(index) ? 'older than its sources' : 'missing'}: npm run build`);
  runChecked('npm', ['run', 'build'], { cwd: FRONTEND_DIR, timeoutMs: BUILD_MS });
  return dist;
}

/**
 * Stop what earlier runs left behind: a run whose runner process is gone but whose state.json
 * still exists was killed before its teardown. Runs whose runner is alive are someone else's
 * concurrent run and are left alone.
 */
async function stopLeftovers(ownRunDir: string): Promise<void> {
  for (const entry of existsSync(RUNS_DIR) ? readdirSync(RUNS_DIR) : []) {
    const dir = path.join(RUNS_DIR, entry);
    const stateFile = path.join(dir, 'state.json');
    if (dir === ownRunDir || !existsSync(stateFile)) continue;
    let old: Partial<StackState>;
    try {
      old = JSON.parse(readFileSync(stateFile, 'utf8')) as Partial<StackState>;
    } catch {
      continue;
    }
    if (old.owner && startTime(old.owner.pid) === old.owner.startTime) {
      console.warn(`[e2e] another e2e run (pid ${old.owner.pid}) is active in this checkout; both share the CPU`);
      continue;
    }
    // Only signal processes that still look like ours: pids are reused.
    const ours = (old.processes ?? []).filter((p) => /poolscope/.test(cmdline(p.pid)));
    const servers = (old.serverPids ?? []).filter((pid) => /mariadbd|mysqld/.test(cmdline(pid)));
    if (ours.length || servers.length) {
      console.log(`[e2e] stopping ${ours.length + servers.length} processes left by an earlier, killed run (${entry})`);
    }
    await stopAll(ours, servers);
    if (old.tmpDir && old.tmpDir.startsWith(os.tmpdir()) && path.basename(old.tmpDir).startsWith('poolscope-e2e-')) {
      rmSync(old.tmpDir, { recursive: true, force: true });
    }
    rmSync(stateFile, { force: true });
  }
}

/** Keep the logs of the last few finished runs only. */
function pruneOldRuns(ownRunDir: string, keep = 5): void {
  const finished = readdirSync(RUNS_DIR)
    .map((e) => path.join(RUNS_DIR, e))
    .filter((d) => d !== ownRunDir && statSync(d).isDirectory() && !existsSync(path.join(d, 'state.json')))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  for (const dir of finished.slice(keep)) rmSync(dir, { recursive: true, force: true });
}
