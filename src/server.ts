import cluster from 'node:cluster';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { servePrimary } from './process/primary.js';
import { serve } from './process/serving.js';

/**
 * The process: reads the configuration, then serves (process/serving.ts: every service it runs, in the
 * order they start and the reverse order they stop, gracefully on SIGTERM or SIGINT), or, with several
 * workers (WEB_CONCURRENCY), supervises them as their primary (process/primary.ts). A start that fails
 * says why on stderr, in one line, and exits 1.
 */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`plant-store: cannot start: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  if (config.webConcurrency > 1 && cluster.isPrimary) await servePrimary(config);
  else await serve(config);
}

main().catch((error: unknown) => {
  process.stderr.write(`plant-store: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
