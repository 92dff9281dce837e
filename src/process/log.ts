import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { chooseLogFormat, prettyDestination } from '../logging/format.js';
import { createLogger, logDestination } from '../logging/logger.js';
import type { Store } from '../store/store.js';
import { rootWarning } from './root.js';

/**
 * The process's logger: JSON lines on stdout, written in batches, or readable text for a person at a
 * terminal; tokens never reach a line (see logging/logger.ts). The first token's message goes to stderr.
 */
export async function processLogger(config: Config): Promise<Logger> {
  const format = chooseLogFormat(config.logFormat, process.stdout.isTTY === true, process.env.NODE_ENV);
  return createLogger(config.logLevel, format === 'pretty' ? await prettyDestination() : logDestination());
}

/** A line on stderr, for the process that has no logger (the primary of several workers) and for failing starts. */
export function stderrLine(text: string): void {
  process.stderr.write(`plant-store: ${text}\n`);
}

/** What the operator should know of this start, once: the store's findings, running as root, settings that open doors. */
export function startupWarnings(log: FastifyBaseLogger, config: Config, store: Store, options: { asRoot: boolean }): void {
  for (const warning of store.warnings) log.warn(warning);
  // Said once: by the primary when there are workers.
  const root = options.asRoot ? rootWarning(process.geteuid?.()) : undefined;
  if (root) log.warn(root);
  store.searchIndex.onFailure((message) =>
    log.error(`search index: cannot catch up with the writes (${message}); searches stay exact, trying again every second`),
  );
  if (config.webhookAllowPrivateNetworks) {
    log.warn(
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS is on: webhook URLs may reach loopback, private and link-local addresses, so anyone holding webhooks:manage can make this service send requests into its own network (for development and tests only)',
    );
  }
}
