/**
 * Browser tests of Plexus: several browser contexts (people) against one real server, started by
 * global-setup.ts (see README.md). Run: `npx playwright test -c e2e/playwright.config.ts`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  testDir: path.join(here, 'tests'),
  outputDir: path.join(here, 'test-results'),
  globalSetup: path.join(here, 'global-setup.ts'),
  globalTeardown: path.join(here, 'global-teardown.ts'),
  // One worker: a 2-core machine running a server and 2-3 browser contexts per test.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  forbidOnly: !!process.env.CI,
  // Limits catch hangs, not slowness: the suite must pass under stress-ng on both cores, where
  // a CSV import or a page load takes several times its quiet time (seen: >10 s for an upload).
  timeout: 180_000,
  expect: { timeout: 30_000 },
  reporter: [['list'], ['json', { outputFile: path.join(here, 'results.json') }]],
  use: {
    headless: true,
    viewport: { width: 1400, height: 900 },
    actionTimeout: 30_000,
    navigationTimeout: 60_000,
    // Tracing doubles the cost of every keystroke on a 2-core machine: opt in with PLEXUS_E2E_TRACE=1.
    trace: process.env.PLEXUS_E2E_TRACE === '1' ? 'retain-on-failure' : 'off',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
});
