import { ConfigError } from '../config/config.js';
import { VERSION } from '../version.js';
import { backupCommand, restoreCommand } from './backup.js';
import { eventsCommand } from './events.js';
import { closest, isAction, parseAction, UsageError, type Action, type Command } from './command.js';
import { actionHelp, commandHelp, toolHelp } from './help.js';
import { migrateCommand } from './migrate.js';
import { say } from './output.js';
import { plantsCommand } from './plants.js';
import { reindexCommand } from './reindex.js';
import { serveCommand } from './serve.js';
import { tokenCommand } from './tokens.js';
import { webhookCommand } from './webhooks.js';

/** Every command of the tool but serve: adding one is one entry here (its module declares its usage and help). */
const COMMANDS: readonly Command[] = [
  tokenCommand,
  webhookCommand,
  plantsCommand,
  eventsCommand,
  backupCommand,
  restoreCommand,
  migrateCommand,
  reindexCommand,
];

/** The tool's commands, serve first: what `plant-store --help` lists (and the help tests walk). */
export function allCommands(serve: () => Promise<void>): readonly Command[] {
  return [serveCommand(serve), ...COMMANDS];
}

const HELP = new Set(['-h', '--help', 'help']);

/** The action an argument list names, or the help it asks for; a name that is no command's is a UsageError. */
function resolve(
  commands: readonly Command[],
  argv: string[],
): { help: string; ok: boolean } | { command: Command; name: string | undefined; action: Action; rest: string[] } {
  const [first, second, ...more] = argv;
  if (first === undefined) return { help: toolHelp(commands), ok: false };
  // `plant-store help token create` is `plant-store token create --help`.
  if (first === 'help') return second === undefined ? { help: toolHelp(commands), ok: true } : resolve(commands, [second, ...more, '--help']);
  if (HELP.has(first)) return { help: toolHelp(commands), ok: true };
  const command = commands.find((c) => c.name === first);
  if (!command) {
    const meant = closest(
      first,
      commands.map((c) => c.name),
    );
    const hint = meant ? `did you mean "${meant}"? ` : '';
    throw new UsageError(`unknown command "${first}": ${hint}the commands are ${commands.map((c) => c.name).join(', ')} (plant-store --help)`);
  }
  if (isAction(command.actions)) return { command, name: undefined, action: command.actions, rest: argv.slice(1) };
  // A command without its action shows what it can do: asked for, on stdout; forgotten, on stderr, as an error.
  if (second === undefined) return { help: commandHelp(command), ok: false };
  if (HELP.has(second)) return { help: commandHelp(command), ok: true };
  const action = command.actions[second];
  if (!action) {
    const names = Object.keys(command.actions);
    const meant = closest(second, names);
    throw new UsageError(
      `unknown ${command.name} command "${second}": ${meant ? `did you mean "${meant}"? ` : ''}the ${command.name} commands are ${names.join(', ')} (plant-store ${command.name} --help)`,
    );
  }
  return { command, name: second, action, rest: more };
}

/**
 * The command-line tool: exit 0 on success, 1 on any failure, with one line on stderr that says what
 * went wrong (and, for a mistake of use, where the help is); never a stack trace. Help asked for goes to
 * stdout; a command given without its action prints its help on stderr and fails.
 */
export async function main(argv: string[], serve: () => Promise<void>): Promise<number> {
  const commands = allCommands(serve);
  // A reader that stops reading (plant-store plants export | head) has all it wanted: stop, quietly.
  // Not the server's: it logs to stdout, and a log that cannot be written is no reason to exit 0.
  if (argv[0] !== commands[0]!.name)
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      process.stderr.write(`plant-store: cannot write to standard output: ${error.message}\n`);
      process.exit(1);
    });
  if (argv[0] === '--version' || argv[0] === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  let path = '';
  try {
    const found = resolve(commands, argv);
    if ('help' in found) {
      (found.ok ? process.stdout : process.stderr).write(found.help);
      return found.ok ? 0 : 1;
    }
    path = found.name === undefined ? found.command.name : `${found.command.name} ${found.name}`;
    const parsed = parseAction(found.action, found.rest);
    if (parsed.help) {
      process.stdout.write(actionHelp(found.command, found.name, found.action));
      return 0;
    }
    await found.action.run(parsed.given);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      const where = path === '' ? '' : `${path}: `;
      say(`plant-store: ${where}${error.message}${path === '' ? '' : `; see "plant-store ${path} --help"`}`);
      return 1;
    }
    const prefix = error instanceof ConfigError ? 'bad configuration: ' : '';
    // The message may quote stored text or the service's answer: on a terminal, its controls are escaped.
    say(`plant-store: ${prefix}${oneLine(error)}`);
    return 1;
  }
}

/** An error's message on one line: a failure is always one line on stderr. */
export function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
}
