// Retakes docs/console.png, the console's plants view as docs/console.md and the README show it: the built
// service (run `npm run build` first) in-process on a throwaway SQLite store, a few plants, Debian's Chromium
// (/usr/bin/chromium, driven by playwright-core, which never downloads a browser) at 1100 × 640, light.
// `node scripts/console-screenshot.mjs [file]` (docs/console.png by default). Not part of the build or the tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const OUTPUT = process.argv[2] ?? fileURLToPath(new URL('../docs/console.png', import.meta.url));
const TOKEN = 'screenshot-token-0123456789abcdefghijkl';
const PLANTS = [
  [1, 'Monstera deliciosa', 'tropical'],
  [2, 'Boston fern (Nephrolepis)', 'fern'],
  [3, 'Golden pothos', 'trailing'],
  [4, 'Snake plant', 'succulent'],
  [5, 'Calathea orbifolia', 'tropical'],
  [6, 'Maidenhair fern', 'fern'],
  [7, 'Aloe vera', 'succulent'],
  [8, 'Peace lily', 'tropical'],
];

const [{ buildApp }, { SqliteStore }] = await Promise.all([import('../dist/src/app.js'), import('../dist/src/store/sqlite/store.js')]);
const dir = mkdtempSync(join(tmpdir(), 'plant-store-screenshot-'));
const store = SqliteStore.open(`file:${join(dir, 'plants.db')}`, { synchronous: 'OFF', busyTimeoutMs: 1000 });
const app = await buildApp({ config: { tokens: [TOKEN], bodyLimit: 64 * 1024 }, store });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  for (const [id, name, tag] of PLANTS) {
    const res = await app.inject({ method: 'POST', url: '/plants', headers: { authorization: `Bearer ${TOKEN}` }, payload: { id, name, tag } });
    if (res.statusCode !== 200) throw new Error(`POST /plants: ${res.statusCode} ${res.body}`);
  }
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  const page = await browser.newPage({ viewport: { width: 1100, height: 640 }, colorScheme: 'light' });
  await page.goto(`${origin}/console#plants?sort=name`);
  await page.getByLabel('Token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('status').filter({ hasText: 'Live' }).first().waitFor();
  await page.getByRole('checkbox', { name: 'Select Golden pothos' }).check();
  await page.getByRole('checkbox', { name: 'Select Snake plant' }).check();
  await page.getByText('2 plants selected.').waitFor();
  await page.mouse.move(0, 639);
  await page.evaluate('scrollTo(0, 0)');
  await page.screenshot({ path: OUTPUT });
  process.stdout.write(`${OUTPUT}\n`);
} finally {
  await browser.close();
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
