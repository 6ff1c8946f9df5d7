// User story: a page on another port of the host cannot frame Poolscope (no clickjacking of Apply), and
// every page, Swagger UI included, runs under the strict Content-Security-Policy without breaking.
import { loginAs } from '../support/auth';
import { expect, test } from '../support/fixtures';
import { PortListener } from '../support/listener';

test.describe('security headers in the browser', () => {
  test('another port of the host cannot frame the logged-in UI', async ({ page, stack }) => {
    await loginAs(page, 'operator');
    const listener = await PortListener.start(
      `<!doctype html><title>framer</title><iframe id="f" src="${stack.baseURL}/targets/${stack.targets.poolOn}" width="800" height="600"></iframe>`,
    );
    try {
      await page.goto(listener.url);
      await expect(page).toHaveTitle('framer');
      const framed = page.frames().find((f) => f !== page.mainFrame());
      expect(framed).toBeDefined();
      // Chromium refuses the frame (frame-ancestors 'none'): nothing of Poolscope renders in it.
      await expect.poll(() => framed!.url()).not.toContain(stack.baseURL);
      await expect(page.frameLocator('#f').getByTestId('brand')).toHaveCount(0);
    } finally {
      await listener.close();
    }
  });

  test('the pages and Swagger UI run without a policy violation', async ({ page, stack }) => {
    await page.addInitScript(() => {
      const seen: string[] = [];
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
      Object.assign(window, { __violations: seen });
    });
    const violations = () => page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);
    await loginAs(page, 'operator');
    const pages: [string, string][] = [
      ['/', 'overview-page'],
      [`/targets/${stack.targets.poolOn}`, 'target-page'],
      ['/alerts', 'alerts-page'],
      ['/snapshots', 'snapshot-list'],
    ];
    for (const [url, testId] of pages) {
      await page.goto(url);
      await expect(page.getByTestId(testId)).toBeVisible();
      await page.waitForTimeout(500); // charts and live data draw after the first paint
      expect(await violations(), url).toEqual([]);
    }
    await page.goto('/api/docs');
    await expect(page.locator('.swagger-ui .opblock').first()).toBeVisible();
    expect(await violations(), '/api/docs').toEqual([]);
  });
});
