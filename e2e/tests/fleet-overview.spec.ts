// User story: a DBA team watches a few hundred servers; the overview is a table with the worst first,
// sortable, filterable by status and tag, searchable, and all of it kept in the URL.
import { FleetPage } from '../pages/fleet-page';
import { expect, test } from '../support/fixtures';
import { FLEET_DOWN, FLEET_SIZE, FLEET_STALLED, fleetName } from '../support/fleet';

const TOTAL = FLEET_SIZE + 2;

test.describe('fleet overview', () => {
  test('the stalled target is at the top, then the down one; only a window of rows is rendered', async ({ page, stack }) => {
    const fleet = new FleetPage(page, stack.fleetBaseURL);
    await fleet.goto();
    await expect(fleet.count).toHaveText(`${TOTAL} targets`);
    await expect(fleet.row(FLEET_STALLED)).toContainText('stalled', { timeout: 30_000 });
    await expect(fleet.row(FLEET_DOWN)).toContainText('down', { timeout: 30_000 });
    await expect.poll(async () => (await fleet.visibleNames()).slice(0, 2)).toEqual([FLEET_STALLED, FLEET_DOWN]);
    await expect(fleet.row(FLEET_STALLED)).toContainText('cluster:eu');
    await expect(page.getByTestId('stalled-banner')).toContainText(FLEET_STALLED);
    // Virtualised: far fewer rows in the DOM than targets; scrolling to the end brings the last ones.
    expect(await fleet.rows.count()).toBeLessThan(80);
    await fleet.sortBy('name').click();
    await fleet.scroller.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await expect(fleet.row(fleetName(FLEET_SIZE - 1))).toBeVisible();
    expect(await fleet.rows.count()).toBeLessThan(80);
  });

  test('sorting by a column is in the URL and survives a reload; the row leads to the target page', async ({ page, stack }) => {
    const fleet = new FleetPage(page, stack.fleetBaseURL);
    await fleet.goto();
    await expect(fleet.row(FLEET_STALLED)).toBeVisible({ timeout: 30_000 });
    await fleet.sortBy('name').click();
    await expect(page).toHaveURL(/\?sort=name$/);
    await expect.poll(async () => (await fleet.visibleNames())[0]).toBe(fleetName(0));
    await fleet.sortBy('name').click();
    await expect(page).toHaveURL(/\?sort=name&dir=desc$/);
    await page.reload();
    await expect.poll(async () => (await fleet.visibleNames())[0]).toBe(FLEET_STALLED); // 'fleet-s…' > 'fleet-d…' > 'fleet-2…'
    await expect(fleet.sortBy('name')).toContainText('▼');
    await page.goBack();
    await expect(page).toHaveURL(/\?sort=name$/);
    await fleet.row(fleetName(0)).getByRole('link').first().click();
    await expect(page).toHaveURL(new RegExp(`/targets/${fleetName(0)}$`));
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(fleetName(0));
  });

  test('filters by status and tag and searches by name or tag, from and into the URL', async ({ page, stack }) => {
    const fleet = new FleetPage(page, stack.fleetBaseURL);
    await fleet.goto();
    await expect(fleet.row(FLEET_DOWN)).toContainText('down', { timeout: 30_000 });

    await fleet.statusFilter.selectOption('down');
    await expect(page).toHaveURL(/\?status=down$/);
    await expect(fleet.count).toHaveText(`1 of ${TOTAL} targets`);
    await expect.poll(() => fleet.visibleNames()).toEqual([FLEET_DOWN]);

    await fleet.statusFilter.selectOption('stalled');
    await expect.poll(() => fleet.visibleNames()).toEqual([FLEET_STALLED]);

    await fleet.statusFilter.selectOption('all');
    await fleet.tagFilter.selectOption('cluster:ap');
    await expect(page).toHaveURL(/\?tag=cluster%3Aap$/);
    const ap = Array.from({ length: FLEET_SIZE }, (_, i) => i).filter((i) => i % 3 === 2).length;
    await expect(fleet.count).toHaveText(`${ap} of ${TOTAL} targets`);
    for (const name of await fleet.visibleNames()) await expect(fleet.row(name)).toContainText('cluster:ap');

    await fleet.search.fill('fleet-01');
    await expect(page).toHaveURL(/q=fleet-01/);
    // fleet-010..019 whose cluster is ap (i % 3 == 2): 011, 014, 017
    await expect.poll(async () => (await fleet.visibleNames()).toSorted()).toEqual([fleetName(11), fleetName(14), fleetName(17)]);

    // The URL alone restores the view: a tag value in the search, with a status filter.
    await fleet.goto('?status=stalled&q=primary');
    await expect.poll(() => fleet.visibleNames()).toEqual([FLEET_STALLED]);
    await expect(fleet.statusFilter).toHaveValue('stalled');
    await expect(fleet.search).toHaveValue('primary');
  });
});
