import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A headless Chromium with a fresh profile (British English unless `locale` says otherwise), closed
 * (and its profile removed) when the test ends. A missing browser fails the test: the browser tests
 * never skip silently.
 */
export async function launchChromium(t: TestContext, options: { locale?: string } = {}): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}. Install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH; the browser tests do not skip.`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'cauri-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    locale: options.locale ?? 'en-GB',
    timezoneId: 'UTC',
    colorScheme: 'light',
    serviceWorkers: 'block',
  });
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}
