// User story: the disk under Poolscope's SQLite store fills up. The operator sees a banner on the page
// saying since when the store fails and what the poller holds in memory meanwhile, and no target
// shown "up" on old numbers; once space is freed, the banner goes (issue 34).
//
// A backend of its own, so the shared one's store is never touched: `poolscope serve` (an API
// process and one poller, so the page reads what the store holds) with one replayed target and its SQLite store on a 16 MB tmpfs that the spec fills (mounting one
// needs root, as the backend's tests/store/outage.py does; skipped where it cannot).
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OverviewPage } from '../pages/overview-page';
import { expect, test } from '../support/fixtures';
import { freePort, groupMembers, ProcessExited, startProcess, stopGroup, tail, waitFor, type Spawned } from '../support/procs';
import { FIXTURE_TARGETS, FIXTURES_DIR, PYTHON, REPO_DIR } from '../support/stack';

const TARGET = 'fx-mariadb-10.11';

test('a full disk under the store shows its banner, and freeing space removes it', async ({ page, stack }) => {
  test.setTimeout(90_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-e2e-store-'));
  const disk = path.join(dir, 'disk');
  mkdirSync(disk);
  let serve: Spawned | undefined;
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0777', 'tmpfs', disk], { encoding: 'utf8' });
    test.skip(mounted.status !== 0, `no small filesystem to fill here: ${mounted.stderr?.trim()}`);
    const port = await freePort();
    const baseURL = `http://127.0.0.1:${port}`;
    const config = path.join(dir, 'poolscope.toml');
    writeFileSync(
      config,
      [
        'workers = 1',
        'poll_interval_s = 1',
        `store_url = ${JSON.stringify(`sqlite+aiosqlite:///${path.join(disk, 'store.db')}`)}`,
        `spool_dir = ${JSON.stringify(path.join(dir, 'spool'))}`,
        'listen_host = "127.0.0.1"',
        `listen_port = ${port}`,
        `static_dir = ${JSON.stringify(path.join(stack.runDir, 'ui'))}`,
        'anonymous_read = true',
        `\n[[targets]]\nname = ${JSON.stringify(TARGET)}\ndsn = ${JSON.stringify(`fixture://${FIXTURE_TARGETS[TARGET]}`)}`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const args = ['-m', 'poolscope_dev', 'poolscope', '--fixtures', FIXTURES_DIR, '--', 'serve', '--config', config];
    const startAt = Date.now();
    serve = startProcess('poolscope-store-outage', PYTHON, args, path.join(stack.logDir, 'poolscope-store-outage.log'), REPO_DIR);
    const started = serve;
    await waitFor(
      `the store-outage backend at ${baseURL} to poll ${TARGET}`,
      async () => {
        if (!groupMembers(started.pid).length) throw new ProcessExited(`it exited\n${tail(started.log)}`);
        const res = await fetch(`${baseURL}/api/targets`, { signal: AbortSignal.timeout(5_000) });
        const targets = res.ok ? ((await res.json()) as { name: string; status: string }[]) : [];
        return targets.some((t) => t.name === TARGET && t.status === 'up') ? true : undefined;
      },
      60_000,
      () => tail(started.log),
    );

    console.log(`[store-outage] backend polling ${((Date.now() - startAt) / 1000).toFixed(1)} s after its start`);
    const overview = new OverviewPage(page);
    await page.goto(`${baseURL}/?view=cards`);
    const card = overview.card(TARGET);
    await expect(card.status).toHaveText('up');
    const banner = page.getByTestId('store-banner');
    await expect(banner).toHaveCount(0);

    const filler = fill(disk);
    const fullAt = Date.now();
    // Issue 34: the UI says so within 5 s of the disk filling (the page asks every 2 s).
    await expect(banner).toBeVisible({ timeout: 5_000 });
    console.log(`[store-outage] banner ${((Date.now() - fullAt) / 1000).toFixed(1)} s after the disk filled`);
    await expect(banner).toContainText(/Store failing since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    await expect(banner).toContainText(/full/i);
    await expect(page.getByTestId('store-held')).toHaveText(/^live data held in memory; [\d,]+ samples buffered/);
    // What it holds grows while the disk stays full: the poller goes on polling.
    const held = async () => Number((await page.getByTestId('store-held').innerText()).match(/([\d,]+) samples/)![1].replace(/,/g, ''));
    const first = await held();
    await expect.poll(held, { timeout: 15_000 }).toBeGreaterThan(first);
    // The store's numbers no longer move: never "up" on numbers older than two intervals.
    await expect(card.status).toHaveText('stale');

    unlinkSync(filler);
    const freedAt = Date.now();
    await expect(banner).toHaveCount(0, { timeout: 30_000 });
    console.log(`[store-outage] banner gone ${((Date.now() - freedAt) / 1000).toFixed(1)} s after space was freed`);
    await expect(card.status).toHaveText('up');
  } finally {
    if (serve) await stopGroup(serve.pid);
    spawnSync('umount', ['-l', disk]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Fill the filesystem at `disk` until a write fails for want of space; returns the filler file. */
function fill(disk: string): string {
  const filler = path.join(disk, 'filler');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(1 << 16);
  try {
    for (let i = 0; i < 1 << 12; i++) writeSync(fd, chunk); // at most 256 MB: bounded however big the disk
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return filler;
}
