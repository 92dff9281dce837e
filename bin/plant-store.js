#!/usr/bin/env node
// The command-line tool (tokens, plants, webhooks, migrations; src/cli/) and, as `plant-store serve`, the
// server (src/server.ts, what `npm start` runs), from their bundles, which `npm run build` (or, in a packed
// tarball, `prepack`) makes in dist/ (scripts/bundle.mjs): each starts in about half the CPU of its modules
// loaded one by one. `serve` alone loads the server and nothing of the CLI: the supervisor and each of its
// workers run this, and are smaller without it.
if (process.argv.length === 3 && process.argv[2] === 'serve') {
  await import('../dist/server/index.js');
} else {
  const { main } = await import('../dist/cli/index.js');
  process.exitCode = await main(process.argv.slice(2), async () => {
    await import('../dist/server/index.js');
  });
}
