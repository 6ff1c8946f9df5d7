// The key pages checked by axe-core, in both themes: no serious or critical violation.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '../support/fixtures';

const PAGES = [
  { name: 'overview', path: '/', ready: 'overview-page' },
  { name: 'target page', path: '', ready: 'target-page' },
  { name: 'alerts page', path: '/alerts', ready: 'alerts-page' },
];

for (const scheme of ['light', 'dark'] as const) {
  test.describe(`accessibility, ${scheme} theme`, () => {
    test.use({ colorScheme: scheme });
    for (const p of PAGES) {
      test(`${p.name} has no serious violation`, async ({ page, stack }) => {
        await page.goto(p.path || `/targets/${stack.targets.poolOn}`);
        await expect(page.getByTestId(p.ready)).toBeVisible();
        // Drawn charts and tables, not a loading state.
        if (p.ready === 'target-page') await expect(page.getByTestId('chart-threads').locator('svg').first()).toBeVisible();
        const result = await new AxeBuilder({ page }).analyze();
        const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(
          serious.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
        ).toEqual([]);
      });
    }
  });
}
