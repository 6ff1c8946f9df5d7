// Playwright config: Debian's chromium (never a downloaded browser), one worker against one shared live stack.
import { defineConfig } from '@playwright/test';

const CI = !!process.env.CI;

export default defineConfig({
  testDir: './tests',
  globalSetup: './global-setup.ts',
  globalTeardown: './global-teardown.ts',
  // The specs share one backend and one sandbox whose variables the stall spec changes.
  fullyParallel: false,
  workers: 1,
  retries: CI ? 1 : 0,
  forbidOnly: CI,
  reporter: 'list',
  // The ten slowest spec files at the end of the run (as the backend's lanes print theirs).
  reportSlowTests: { max: 10, threshold: 0 },
  outputDir: 'test-results',
  // Bounded everywhere: a test, an assertion, an action, and the whole run (setup included).
  timeout: 120_000,
  globalTimeout: 20 * 60_000,
  expect: { timeout: 15_000 },
  use: {
    // Global setup picks a free port and exports it; the `baseURL` fixture reads it in the worker.
    baseURL: process.env.POOLSCOPE_E2E_BASE_URL,
    headless: true,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    actionTimeout: 15_000,
    navigationTimeout: 30_000,
    viewport: { width: 1440, height: 1000 },
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
});
