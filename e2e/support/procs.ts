// Child processes for the e2e stack: each in its own process group, logged to a file, killed and verified gone by group.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

export interface Spawned {
  /** Also the process-group id: every child is started as a group leader (detached). */
  pid: number;
  name: string;
  log: string;
}

/** Environment for children: no POOLSCOPE_* from the developer's shell may override the generated config. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('POOLSCOPE_')) env[k] = v;
  }
  return { ...env, PYTHONUNBUFFERED: '1', ...extra };
}

const SETPRIV = '/usr/bin/setpriv';

/**
 * Start `cmd` detached (its own process group), output appended to `log`. Where util-linux's
 * setpriv exists the child also gets SIGTERM when the process that started it dies, so a runner
 * killed before its teardown (SIGTERM from `timeout`, SIGKILL) still leaves nothing running.
 */
export function startProcess(name: string, cmd: string, args: string[], log: string, cwd?: string): Spawned {
  const fd = openSync(log, 'a');
  if (existsSync(SETPRIV)) {
    args = ['--pdeathsig', 'TERM', '--', cmd, ...args];
    cmd = SETPRIV;
  }
  try {
    const child = spawn(cmd, args, {
      cwd,
      env: cleanEnv(),
      detached: true, // own process group, so teardown can signal the whole tree
      stdio: ['ignore', fd, fd],
    });
    if (child.pid === undefined) throw new Error(`could not start ${name}: ${cmd}`);
    // Setup returns while these run; do not let their handles keep the runner alive.
    child.unref();
    return { pid: child.pid, name, log };
  } finally {
    closeSync(fd);
  }
}

/** Non-zombie processes whose process group is `pgid` (scans /proc, so it sees grandchildren too). */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while scanning
    }
    // Fields after "(comm)": state ppid pgrp ...
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] !== 'Z' && Number(rest[2]) === pgid) out.push(Number(entry));
  }
  return out;
}

export function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The kernel's start time of `pid` (clock ticks since boot), '' if it is gone: with the pid, a unique process id. */
export function startTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)" start at field 3 (state); starttime is field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

/** Thrown by a waitFor check when the process it waits on has died: waitFor rethrows it at once. */
export class ProcessExited extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // ESRCH: already gone
  }
}

/**
 * SIGTERM the process group, wait up to `graceMs`, then SIGKILL; resolves with whatever is
 * still alive afterwards (empty = clean).
 */
export async function stopGroup(pgid: number, graceMs = 20_000): Promise<number[]> {
  if (!groupMembers(pgid).length) return [];
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!groupMembers(pgid).length) return [];
    await sleep(100);
  }
  signalGroup(pgid, 'SIGKILL');
  const killDeadline = Date.now() + 5_000;
  while (Date.now() < killDeadline) {
    if (!groupMembers(pgid).length) return [];
    await sleep(100);
  }
  return groupMembers(pgid);
}

/** Wait (bounded) for a single pid that is not in our groups (mariadbd runs in its own session). */
export async function stopPid(pid: number, graceMs = 20_000): Promise<boolean> {
  if (!pidAlive(pid)) return true;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!pidAlive(pid)) return true;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  const killDeadline = Date.now() + 5_000;
  while (Date.now() < killDeadline) {
    if (!pidAlive(pid)) return true;
    await sleep(100);
  }
  return false;
}

/** Poll `check` until it returns a value (not undefined) or `timeoutMs` passes; `fail` explains the timeout. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  fail?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown = null;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      // A process that died will not come back: fail now instead of at the deadline.
      if (e instanceof ProcessExited) throw e;
      lastErr = e;
    }
    await sleep(250);
  }
  const detail = fail ? `\n${fail()}` : '';
  const err = lastErr ? ` (last error: ${lastErr instanceof Error ? lastErr.message : String(lastErr)})` : '';
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${err}${detail}`);
}

export function tail(file: string, lines = 25): string {
  if (!existsSync(file)) return `(no log at ${file})`;
  const text = readFileSync(file, 'utf8').trimEnd().split('\n');
  return `--- last lines of ${file} ---\n${text.slice(-lines).join('\n')}`;
}

/** Run a short command synchronously with a hard timeout; throws with its output on failure. */
export function runChecked(cmd: string, args: string[], opts: { cwd?: string; timeoutMs: number; input?: string }): string {
  const res = spawnSync(cmd, args, {
    cwd: opts.cwd,
    input: opts.input,
    env: cleanEnv(),
    encoding: 'utf8',
    timeout: opts.timeoutMs,
    killSignal: 'SIGKILL',
  });
  if (res.error) throw new Error(`${cmd} ${args.join(' ')}: ${res.error.message}`);
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${res.status ?? res.signal}:\n${res.stdout}\n${res.stderr}`);
  }
  return res.stdout;
}

/**
 * Stop process groups newest first, then make sure the mariadbd servers are gone too; returns what is left.
 * The grace is the dev stack's: it stops two backends, a load and two servers in order before it exits.
 */
export async function stopAll(procs: { name: string; pid: number }[], serverPids: number[], graceMs = 120_000): Promise<string[]> {
  const problems: string[] = [];
  for (const p of [...procs].reverse()) {
    const left = await stopGroup(p.pid, graceMs);
    if (left.length) problems.push(`${p.name} (pgid ${p.pid}) left ${left.join(', ')} running`);
  }
  for (const pid of serverPids) {
    if (!(await stopPid(pid))) problems.push(`mariadbd pid ${pid} still running`);
  }
  return problems;
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
