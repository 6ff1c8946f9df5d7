// User story: an operator opens Poolscope and sees every monitored server's health at a glance.
import { OverviewPage } from '../pages/overview-page';
import { expect, test } from '../support/fixtures';
import { FIXTURE_TARGETS } from '../support/stack';

test.describe('overview', () => {
  test('lists every configured target', async ({ page, stack }) => {
    const overview = new OverviewPage(page);
    await overview.goto();

    await expect(overview.heading).toBeVisible();
    await expect(overview.cards).toHaveCount(Object.keys(stack.targets).length + Object.keys(FIXTURE_TARGETS).length);
    for (const name of Object.values(stack.targets)) {
      await expect(overview.card(name).root, `card for ${name}`).toBeVisible();
    }
  });

  test('a healthy pool-of-threads server is up with its flavor and version', async ({ page, stack, api }) => {
    const overview = new OverviewPage(page);
    await overview.goto();
    const sandbox = overview.card(stack.targets.poolOn);
    const server = (await api.target(stack.targets.poolOn)).server;

    await expect(sandbox.status).toHaveText('up');
    await expect(sandbox.version).toContainText(/MariaDB\s+10\.\d+\.\d+/);
    await expect(sandbox.version).toContainText(server?.version ?? 'version missing from the API');
    await expect(sandbox.threadHandling).toContainText('pool-of-threads');
    // Pool numbers are shown for a pool that is on.
    await expect(sandbox.queuedStat).toBeVisible();
    await expect(sandbox.stalledGroupsStat).toContainText('/ 2');
    await expect(sandbox.reason).toHaveCount(0);
  });

  test('an unreachable server is down with a clear reason', async ({ page, stack, api }) => {
    const overview = new OverviewPage(page);
    await overview.goto();
    const down = overview.card(stack.targets.unreachable);
    const reported = await api.target(stack.targets.unreachable);

    await expect(down.status).toHaveText('down');
    // The card shows the backend's reason as it is.
    expect(reported.reason).toBeTruthy();
    await expect(down.reason).toHaveText(reported.reason ?? '');
    // The reason says it could not connect, to which address, and never leaks the password.
    await expect(down.reason).toContainText(/connect/i);
    await expect(down.reason).toContainText(new RegExp(`127\\.0\\.0\\.1:${stack.unreachablePort}(?!\\d)`));
    await expect(down.reason).not.toContainText('unused');
    await expect(down.version).toContainText(/not connected/i);
    await expect(down.pollAge).toHaveText(/no successful poll yet/i);
  });

  test('a server without the thread pool is explained, not shown as zeros', async ({ page, stack }) => {
    const overview = new OverviewPage(page);
    await overview.goto();
    const poolOff = overview.card(stack.targets.poolOff);

    await expect(poolOff.status).toHaveText('up');
    await expect(poolOff.threadHandling).toContainText('one-thread-per-connection');
    await expect(poolOff.poolOffNotice).toContainText(/thread pool off/i);
    await expect(poolOff.poolOffNotice).toContainText('pool-of-threads');
    // No misleading "0 queued / 0 stalled" for a pool that does not exist.
    await expect(poolOff.queuedStat).toHaveCount(0);
    await expect(poolOff.stalledGroupsStat).toHaveCount(0);
  });

  test('a monitoring user without PROCESS gets a privilege warning', async ({ page, stack }) => {
    const overview = new OverviewPage(page);
    await overview.goto();
    const noproc = overview.card(stack.targets.noProcess);

    await expect(noproc.status).toHaveText('up');
    await expect(noproc.privilegeWarning).toContainText('PROCESS missing');
    // The users with PROCESS get no such warning.
    await expect(overview.card(stack.targets.poolOn).privilegeWarning).toHaveCount(0);
  });

  test('a card leads to the target page', async ({ page, stack }) => {
    const overview = new OverviewPage(page);
    await overview.goto();
    await overview.card(stack.targets.poolOn).link.click();

    await expect(page).toHaveURL(new RegExp(`/targets/${stack.targets.poolOn}$`));
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(stack.targets.poolOn);
  });
});
