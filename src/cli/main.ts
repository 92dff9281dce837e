import { ConfigError } from '../config.js';
import { withStore, UsageError } from './common.js';
import { EVENTS_USAGE, eventsCommand } from './events.js';
import { PLANTS_USAGE, plantsCommand } from './plants.js';
import { TOKEN_USAGE, tokenCommand } from './tokens.js';
import { WEBHOOK_USAGE, webhookCommand } from './webhooks.js';

const USAGE = `Usage: plant-store <command>

Commands (against the store DATABASE_URL names, the same as the server's):
${TOKEN_USAGE}
${WEBHOOK_USAGE}
${PLANTS_USAGE}
${EVENTS_USAGE}
  migrate                                      apply the schema migrations and exit
`;

/** The command-line tool: exit 0 on success, 1 on a failure, 2 on bad arguments (with the usage). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (command === 'token') await tokenCommand(args);
    else if (command === 'webhook') await webhookCommand(args);
    else if (command === 'plants') await plantsCommand(args);
    else if (command === 'events') await eventsCommand(args);
    else if (command === 'migrate') {
      const kind = await withStore((store) => Promise.resolve(store.kind));
      process.stderr.write(`the ${kind} store's schema is up to date\n`);
    } else if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      process.stdout.write(USAGE);
    } else throw new UsageError(`unknown command "${command}"`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`plant-store: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    const prefix = error instanceof ConfigError ? 'bad configuration: ' : '';
    process.stderr.write(`plant-store: ${prefix}${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
