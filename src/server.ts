import { buildApp } from './app.js';
import { bootstrapToken } from './auth/bootstrap.js';
import { ConfigError, loadConfig, redactUrl, type Config } from './config.js';
import { openStore } from './store/open.js';

/**
 * The process: reads the configuration, opens the store, serves, and shuts down cleanly on SIGTERM or
 * SIGINT (stop accepting, finish the requests in flight, close the store, exit 0).
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

  const store = await openStore(config);
  await bootstrapToken(store, config.tokens, (text) => process.stderr.write(text));
  const app = await buildApp({
    config,
    store,
    logger: {
      level: config.logLevel,
      // Tokens never reach a log line, wherever a serializer might put them.
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
    },
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('requests still in flight after 10 s; exiting anyway');
      process.exit(1);
    }, 10_000);
    force.unref();
    app
      .close()
      .then(() => store.close())
      .then(() => {
        app.log.info('stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  app.log.info({ store: store.kind, database: redactUrl(config.databaseUrl) }, 'plant store ready');
}

main().catch((error: unknown) => {
  process.stderr.write(`plant-store: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
