// The documentation's screenshots, taken from a running `make demo` (not part of the e2e suite):
//   make demo                      (in another terminal; wait for "Poolscope demo is running")
//   make screenshots               (writes docs/images/*.png)
// Debian's chromium, as the suite uses it (playwright.config.ts): no browser is downloaded.
import { defineConfig } from '@playwright/test';
import base from './playwright.config';

export default defineConfig({
  testDir: './screenshots',
  workers: 1,
  reporter: 'list',
  outputDir: 'test-results/screenshots',
  // Waiting for the demo's next stall takes up to one load cycle (about 5 minutes).
  timeout: 15 * 60_000,
  expect: { timeout: 30_000 },
  use: {
    ...base.use,
    baseURL: process.env.POOLSCOPE_SCREENSHOTS_URL ?? 'http://127.0.0.1:8000',
    trace: 'off',
    screenshot: 'off',
    viewport: { width: 1440, height: 1000 },
    timezoneId: 'UTC',
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
});
