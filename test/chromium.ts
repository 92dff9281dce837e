import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core (which never downloads a browser of its own), for the
 * tests that need a real browser. Without /usr/bin/chromium those tests are skipped, loudly.
 */
export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests are skipped here, or false when Chromium is installed. */
export const browserSkip: string | false = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (Debian package chromium; .ci/run installs it)`;

// Playwright adds --user-data-dir itself, from launchPersistentContext's first argument (a fresh directory).
// Without the background-networking flags Chromium keeps trying to reach Google's hosts, which this machine refuses.
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium with a fresh profile in `dir`; the caller closes it. */
export function launchChromium(dir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}
