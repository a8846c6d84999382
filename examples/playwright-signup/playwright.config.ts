import { defineConfig } from '@playwright/test';

/** Where the app listens; the test's tempinbox server is TEMPINBOX_URL, its SMTP port SMTP_PORT. */
const APP_PORT = Number(process.env.APP_PORT ?? 3210);

export default defineConfig({
  testDir: './tests',
  outputDir: process.env.PLAYWRIGHT_OUTPUT_DIR ?? './test-results',
  timeout: 60_000,
  reporter: 'list',
  use: {
    baseURL: `http://127.0.0.1:${APP_PORT}`,
    // Debian's Chromium (apt install chromium): Playwright downloads no browser here.
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
  webServer: {
    command: 'node app.mjs',
    url: `http://127.0.0.1:${APP_PORT}/`,
    reuseExistingServer: false,
    timeout: 20_000,
    env: { APP_PORT: String(APP_PORT), SMTP_HOST: process.env.SMTP_HOST ?? '127.0.0.1', SMTP_PORT: process.env.SMTP_PORT ?? '2525' },
  },
});
