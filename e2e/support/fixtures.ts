// Test fixtures: the running stack, a typed API client, load generators and a provoked pool stall, all cleaned up after use.
import path from 'node:path';
import { test as base, expect, type APIRequestContext } from '@playwright/test';
import { groupMembers, pidAlive, runChecked, startProcess, stopGroup, tail, type Spawned } from './procs';
import { PYTHON, REPO_DIR, readState, type SandboxInfo, type StackState } from './stack';
import type { components } from '../../frontend/src/api/schema.gen';
import type { AlertsResponse, GroupState, Target, TargetState } from '../../frontend/src/api/types';

/** The API's shapes, from the UI's contract types (generated from the backend's OpenAPI document). */
export type ApiTarget = Target;
export type ApiGroup = GroupState;
export type ApiState = TargetState;
export type ApiAlertRules = components['schemas']['RulesOut'];

export class PoolscopeApi {
  constructor(private readonly request: APIRequestContext) {}

  async targets(): Promise<ApiTarget[]> {
    const res = await this.request.get('/api/targets');
    expect(res.ok(), `GET /api/targets answered ${res.status()}`).toBeTruthy();
    return (await res.json()) as ApiTarget[];
  }

  async target(name: string): Promise<ApiTarget> {
    const res = await this.request.get(`/api/targets/${encodeURIComponent(name)}`);
    expect(res.ok(), `GET /api/targets/${name} answered ${res.status()}`).toBeTruthy();
    return (await res.json()) as ApiTarget;
  }

  async state(name: string): Promise<ApiState> {
    const res = await this.request.get(`/api/targets/${encodeURIComponent(name)}/state`);
    expect(res.ok(), `GET /api/targets/${name}/state answered ${res.status()}`).toBeTruthy();
    return (await res.json()) as ApiState;
  }

  /** The alerts firing or pending now, and the silences in effect. */
  async alerts(): Promise<AlertsResponse> {
    const res = await this.request.get('/api/alerts');
    expect(res.ok(), `GET /api/alerts answered ${res.status()}`).toBeTruthy();
    return (await res.json()) as AlertsResponse;
  }

  /** The alert rules and the settings in effect (how long a firing or flapping alert takes to resolve). */
  async alertRules(): Promise<ApiAlertRules> {
    const res = await this.request.get('/api/alerts/rules');
    expect(res.ok(), `GET /api/alerts/rules answered ${res.status()}`).toBeTruthy();
    return (await res.json()) as ApiAlertRules;
  }
}

export type LoadMode = 'waves' | 'stall' | 'trx';

/** Starts bounded loadgen runs against the pool-on sandbox; every run is stopped when the test ends. */
export class LoadDriver {
  private readonly runs: Spawned[] = [];

  constructor(
    private readonly sandbox: SandboxInfo,
    private readonly logDir: string,
    private readonly testSlug: string,
  ) {}

  start(mode: LoadMode, opts: { durationS: number; connections?: number; extra?: string[] }): Spawned {
    const dsn = this.sandbox.dsns.sbtest.replace(/\/$/, '/sbtest');
    const args = ['-m', 'poolscope_dev.loadgen', '--dsn', dsn, '--mode', mode, '--duration', String(opts.durationS)];
    if (opts.connections) args.push('--connections', String(opts.connections));
    args.push(...(opts.extra ?? []));
    const log = path.join(this.logDir, `loadgen-${mode}-${this.testSlug}-${this.runs.length}.log`);
    const run = startProcess(`loadgen-${mode}`, PYTHON, args, log, REPO_DIR);
    this.runs.push(run);
    return run;
  }

  running(run: Spawned): boolean {
    return groupMembers(run.pid).length > 0;
  }

  async stopAll(): Promise<void> {
    const problems: string[] = [];
    for (const run of this.runs.splice(0).reverse()) {
      const left = await stopGroup(run.pid, 15_000);
      if (left.length) problems.push(`${run.name} left ${left.join(', ')}\n${tail(run.log)}`);
    }
    if (problems.length) throw new Error(`load generators did not stop:\n${problems.join('\n')}`);
  }
}

/** Server variables through the sandbox's root socket client (`mariadb -S SOCKET -uroot`). */
export class SandboxAdmin {
  constructor(private readonly sandbox: SandboxInfo) {}

  sql(statements: string): string {
    return runChecked('mariadb', ['-S', this.sandbox.socket, '-uroot', '--batch', '--skip-column-names', '-e', statements], {
      timeoutMs: 30_000,
    });
  }

  globals(names: string[]): Record<string, string> {
    const out = this.sql(`SELECT ${names.map((n) => `@@GLOBAL.${n}`).join(', ')}`)
      .trim()
      .split('\t');
    return Object.fromEntries(names.map((n, i) => [n, out[i]]));
  }

  setGlobals(values: Record<string, string | number>): void {
    this.sql(
      Object.entries(values)
        .map(([k, v]) => `SET GLOBAL ${k} = ${v};`)
        .join(' '),
    );
  }
}

/** The REFERENCE stall recipe: one thread group, a 100 ms stall limit, long CPU-bound statements. */
export interface PoolStall {
  /** Settings in force before the stall (restored after the test). */
  before: Record<string, string>;
  load: Spawned;
}

const STALL_VARS = ['thread_pool_size', 'thread_pool_stall_limit'];

interface Fixtures {
  /** Fails a test (with the server's crash log) when a sandbox MariaDB died while it ran. */
  serversAlive: void;
  stack: StackState;
  api: PoolscopeApi;
  load: LoadDriver;
  admin: SandboxAdmin;
  stalledPool: PoolStall;
  /** Like stalledPool, but the test says when: call it once the page is open (cleaned up the same way). */
  provokeStall: () => PoolStall;
}

export const test = base.extend<Fixtures>({
  // The port is chosen by global setup; fall back to the state file if the env did not reach us.
  baseURL: async ({}, use) => {
    await use(process.env.POOLSCOPE_E2E_BASE_URL || readState().baseURL);
  },
  stack: async ({}, use) => {
    await use(readState());
  },
  serversAlive: [
    async ({ stack }, use) => {
      await use();
      const dead = [stack.poolOn, stack.poolOff].filter((s) => !pidAlive(s.pid));
      if (dead.length) {
        throw new Error(
          `sandbox MariaDB died during this test (a server crash, not a UI failure):\n` +
            dead.map((s) => tail(s.log_file, 60)).join('\n'),
        );
      }
    },
    { auto: true },
  ],
  api: async ({ request }, use) => {
    await use(new PoolscopeApi(request));
  },
  load: async ({ stack }, use, testInfo) => {
    const slug = testInfo.titlePath
      .join('-')
      .replace(/[^A-Za-z0-9]+/g, '-')
      .slice(-60);
    const driver = new LoadDriver(stack.poolOn, stack.logDir, slug);
    try {
      await use(driver);
    } finally {
      await driver.stopAll();
    }
  },
  admin: async ({ stack }, use) => {
    await use(new SandboxAdmin(stack.poolOn));
  },
  stalledPool: async ({ provokeStall }, use) => {
    await use(provokeStall());
  },
  provokeStall: async ({ admin, load }, use) => {
    let before: Record<string, string> | null = null;
    try {
      await use(() => {
        before = admin.globals(STALL_VARS);
        admin.setGlobals({ thread_pool_size: 1, thread_pool_stall_limit: 100 });
        return {
          before,
          load: load.start('stall', {
            durationS: 90,
            extra: ['--stall-seconds', '3'],
          }),
        };
      });
    } finally {
      if (before) {
        // Stop the long statements first so the restore does not queue behind them.
        await load.stopAll();
        admin.setGlobals(before);
        const after = admin.globals(STALL_VARS);
        expect(after, 'pool variables restored after the stall').toEqual(before);
      }
    }
  },
});

export { expect };
