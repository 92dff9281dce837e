import type { Command } from './command.js';

/**
 * `plant-store serve`: the server, as `npm start` runs it, for an installed package (`npx plant-store
 * serve`). The server's process module stands above the CLI on the house's ladder, so the entry point
 * (bin/plant-store.js) hands the CLI the function that starts it.
 */
export function serveCommand(start: () => Promise<void>): Command {
  return {
    name: 'serve',
    summary: 'run the server (what npm start runs), configured by the environment',
    usesStore: true,
    actions: {
      summary: 'run the server (what npm start runs), configured by the environment',
      details:
        'Serves the API on HOST:PORT (127.0.0.1:8080 by default) from the store DATABASE_URL names, until SIGTERM or SIGINT. Every setting is an environment variable, read and checked once at start (a bad value stops it, naming the setting); docs/configuration.md lists them. On its first start, with no token configured, it prints one full-access token on stderr.',
      run: start,
    },
  };
}
