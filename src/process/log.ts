import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { chooseLogFormat, prettyDestination } from '../logging/format.js';
import { createLogger, logDestination } from '../logging/logger.js';
import type { Store } from '../store/store.js';

/**
 * The process's logger: JSON lines on stdout, written in batches, or readable text for a person at a
 * terminal; tokens never reach a line (see logging/logger.ts). The first token's message goes to stderr.
 */
export async function processLogger(config: Config): Promise<Logger> {
  const format = chooseLogFormat(config.logFormat, process.stdout.isTTY === true, process.env.NODE_ENV);
  return createLogger(config.logLevel, format === 'pretty' ? await prettyDestination() : logDestination());
}

/** A line on stderr: what the operator must see even without reading the log (a failed start, a reload). */
export function stderrLine(text: string): void {
  process.stderr.write(`plant-store: ${text}\n`);
}

/** What the operator should know of a worker's start: the store's findings, settings that open doors (running as root: the supervisor says it). */
export function startupWarnings(log: FastifyBaseLogger, config: Config, store: Store): void {
  for (const warning of store.warnings) log.warn(warning);
  store.searchIndex.onFailure((message) =>
    log.error(`search index: cannot catch up with the writes (${message}); searches stay exact, trying again every second`),
  );
  if (config.webhookAllowPrivateNetworks) {
    log.warn(
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS is on: webhook URLs may reach loopback, private and link-local addresses, so anyone holding webhooks:manage can make this service send requests into its own network (for development and tests only)',
    );
  }
}
