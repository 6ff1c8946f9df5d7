// Global teardown: stop the load, the backend and both sandboxes (by process group), then prove nothing is left.
import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cmdline, pidAlive, stopAll, stopPid } from './support/procs';
import { readState } from './support/stack';

export default async function globalTeardown(): Promise<void> {
  const stateFile = process.env.POOLSCOPE_E2E_STATE;
  if (!stateFile || !existsSync(stateFile)) return; // setup failed and already cleaned up
  const state = readState();
  const problems = await stopAll(state.processes ?? [], state.serverPids ?? []);

  // Anything else still pointing at this run (a spec's loadgen, a stray client): its command line
  // names the temp dir or one of the sandbox ports.
  const marks = [state.tmpDir, `:${state.poolOn?.port}/`, `:${state.poolOn?.extra_port}/`, `:${state.poolOff?.port}/`].filter(
    (m): m is string => !!m && !m.includes('undefined'),
  );
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const cmd = cmdline(pid);
    if (cmd && marks.some((m) => cmd.includes(m)) && pidAlive(pid)) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      if (!(await stopPid(pid, 10_000))) problems.push(`pid ${pid} (${cmd.slice(0, 120)}) still running`);
      else problems.push(`stray pid ${pid} (${cmd.slice(0, 120)}) had to be stopped by teardown`);
    }
  }

  // The servers' own error logs live in the temp dir: keep them with the other logs (crash reports).
  for (const [label, info] of [['pool-on', state.poolOn], ['pool-off', state.poolOff]] as const) {
    if (info?.log_file && existsSync(info.log_file)) copyFileSync(info.log_file, path.join(state.logDir, `mariadb-${label}.err`));
  }

  if (state.tmpDir && state.tmpDir.startsWith(os.tmpdir()) && path.basename(state.tmpDir).startsWith('poolscope-e2e-')) {
    rmSync(state.tmpDir, { recursive: true, force: true });
  }
  rmSync(path.join(state.runDir, 'ui'), { recursive: true, force: true });
  rmSync(stateFile, { force: true });
  if (problems.length) {
    throw new Error(`e2e teardown: not everything stopped cleanly:\n  ${problems.join('\n  ')}\nlogs: ${state.logDir}`);
  }
  console.log(`[e2e] stack stopped; nothing left running (logs kept in ${state.logDir})`);
}
