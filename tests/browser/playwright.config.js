// Browser end-to-end tests of the UltiCode web console.
// Run with scripts/browser-tests.sh (or `npx playwright test` here). Playwright never
// downloads a browser: the tests use Debian's Chromium.
import { defineConfig } from '@playwright/test';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export default defineConfig({
  testDir: './specs',
  outputDir: './test-results/artifacts',
  globalSetup: './lib/global-setup.js',
  globalTeardown: './lib/global-teardown.js',
  // One browser at a time: the machine has two cores and the server judges on them.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  forbidOnly: true,
  timeout: 180_000,
  expect: { timeout: 15_000 },
  reporter: [['list'], ['json', { outputFile: 'test-results/results.json' }]],
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
    timezoneId: 'UTC',
    actionTimeout: 20_000,
    navigationTimeout: 30_000,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: chromium,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    },
  },
});
