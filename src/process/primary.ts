import { bootstrapToken, warnWithoutTokens } from '../auth/bootstrap.js';
import type { Config } from '../config/config.js';
import { openStore } from '../store/open.js';
import { backupService } from './background.js';
import { runPrimary } from './cluster.js';
import { metricsListener } from './listeners.js';
import { processLogger, stderrLine } from './log.js';
import { rootWarning } from './root.js';
import { Services } from './services.js';

/**
 * The primary of several workers (WEB_CONCURRENCY > 1): it migrates the store and makes the first token
 * once, here, so that the workers find both done; then it serves nothing but metrics (the workers' sum,
 * metrics/cluster.ts) and takes the scheduled backups (one process must), whose metrics it serves beside
 * the workers'; and it forks and supervises the workers (process/cluster.ts). Its services, in order.
 */
export async function servePrimary(config: Config): Promise<void> {
  const store = await openStore(config, {});
  try {
    await bootstrapToken(store, config, (text) => process.stderr.write(text));
    await warnWithoutTokens(store, config, (text) => process.stderr.write(text));
  } finally {
    await store.close();
  }
  const services = new Services();
  const log = await processLogger(config);
  const own = config.metricsPort !== undefined && config.backupDir !== '' ? new (await import('prom-client')).Registry() : undefined;
  if (config.backupDir !== '') await services.start(await backupService(config, log, own));
  if (config.metricsPort !== undefined) {
    const scrape = (await import('../metrics/cluster.js')).clusterScrape(own);
    const log = {
      listening: (url: string) => stderrLine(`metrics listening at ${url}`),
      failed: (error: unknown) => stderrLine(`metrics scrape failed: ${error instanceof Error ? error.message : String(error)}`),
    };
    await services.start(await metricsListener(config, scrape, log));
  }
  // In the log, as one process logs it (a JSON line, or readable text on a terminal): one form either way.
  const asRoot = rootWarning(process.geteuid?.());
  if (asRoot) log.warn(asRoot);
  runPrimary(config.webConcurrency, () => void services.stopAll((name, error) => stderrLine(`error while shutting down: ${name}: ${String(error)}`)));
}
