import { loadConfig } from '../config/config.js';
import { databaseKind, redactUrl, sqlitePath } from '../store/database-url.js';
import { TOKEN_VARIABLE, URL_VARIABLE } from './api-target.js';
import { isAction, synopsis, type Action, type Command } from './command.js';

/**
 * The help texts, made from the commands' declarations: the whole tool's (`plant-store --help`), a
 * command's (`plant-store token --help`) and an action's (`plant-store token create --help`), each with
 * only what that level needs.
 */

/** The width help is laid out in. */
const WIDTH = 110;

/** Text broken into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      if (line !== '' && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line === '' ? word : `${line} ${word}`;
    }
    lines.push(line);
  }
  return lines;
}

/** Rows of two columns, the first padded to the widest (at most `max` wide: a longer one takes its own line), the second wrapped. */
function columns(rows: Array<[string, string]>, max = 44): string {
  const width = Math.min(max, Math.max(0, ...rows.map(([left]) => left.length)));
  const indent = ' '.repeat(width + 4);
  return rows
    .map(([left, right]) => {
      const [first = '', ...rest] = wrap(right, Math.max(30, WIDTH - width - 4));
      const head = left.length > width ? `  ${left}\n${indent}${first}` : `  ${left.padEnd(width)}  ${first}`;
      return [head, ...rest.map((line) => `${indent}${line}`)].join('\n');
    })
    .join('\n');
}

/** Which store the commands would open, as the server would: DATABASE_URL, and the file it names. */
function storeLine(): string {
  try {
    const url = loadConfig().databaseUrl;
    const where = databaseKind(url) === 'sqlite' ? ` (${sqlitePath(url)})` : '';
    return `The store: DATABASE_URL=${redactUrl(url)}${where}, the same as the server's.`;
  } catch (error) {
    return `The store: DATABASE_URL, which is not usable now: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Which service --url would default to, and whether there is a token to send it: for the actions that can reach one. */
function serviceLine(): string {
  const url = process.env[URL_VARIABLE];
  const token = `the token in ${TOKEN_VARIABLE} (${process.env[TOKEN_VARIABLE] ? 'set' : 'not set now'})`;
  if (!url) return `Through a service: --url URL, or ${URL_VARIABLE} (not set now); ${token}.`;
  return `Through a service: ${URL_VARIABLE}=${redactUrl(url)}, where these commands go (not to the store) unless --url names another; ${token}.`;
}

/** Whether an action can work through a running service (it declares the --url option). */
const reachesService = (action: Action) => action.options?.url !== undefined;

function actionRows(command: Command): Array<[string, string]> {
  if (isAction(command.actions)) return [[`${command.name} ${synopsis(command.actions)}`.trim(), command.actions.summary]];
  return Object.entries(command.actions).map(([name, action]) => [`${command.name} ${name} ${synopsis(action)}`.trim(), action.summary]);
}

export function toolHelp(commands: readonly Command[]): string {
  return `Usage: plant-store <command> [options]

The plant store's server (serve), and its tokens, plants and webhooks from the command line: the commands
work on the store DATABASE_URL names, the server's (a SQLite file by default, relative to the current directory).
The token, plant and webhook commands and events tail can work through a running service instead, from
anywhere: --url URL (or ${URL_VARIABLE}), with the token in ${TOKEN_VARIABLE}.

Commands:
${columns(commands.flatMap(actionRows))}

Options:
${columns([
  ['-h, --help', 'show this help; after a command, that command\'s ("plant-store token create --help")'],
  ['-v, --version', 'show the version'],
])}

${storeLine()}
`;
}

export function commandHelp(command: Command): string {
  if (isAction(command.actions)) return actionHelp(command, undefined, command.actions);
  const names = Object.keys(command.actions);
  return `Usage: plant-store ${command.name} <${names.join('|')}> [options]

${command.summary}

Commands:
${columns(actionRows(command).map(([left, right]) => [`plant-store ${left}`, right]))}

"plant-store ${command.name} <command> --help" shows a command's options.${command.usesStore ? `\n${storeLine()}` : ''}${
    Object.values(command.actions).some(reachesService) ? `\n${serviceLine()}` : ''
  }
`;
}

/**
 * An action's help, short enough for a screen (test/cli/help.test.ts holds every action to 15 lines): its
 * usage, one paragraph (the summary, then the details), its arguments and options in one table, and where
 * it works (the store, and a service for an action that takes --url). docs/cli.md has the rest.
 */
export function actionHelp(command: Command, name: string | undefined, action: Action): string {
  const path = name === undefined ? command.name : `${command.name} ${name}`;
  const args = (action.args ?? []).filter((arg) => arg.help).map((arg): [string, string] => [arg.name, arg.help!]);
  const options = Object.entries(action.options ?? {}).map(([option, spec]): [string, string] => [
    `--${option}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`,
    `${spec.help}${spec.multiple ? '; may be repeated' : ''}`,
  ]);
  const paragraph = `${action.summary[0]!.toUpperCase()}${action.summary.slice(1)}.${action.details ? ` ${action.details}` : ''}`;
  return `Usage: plant-store ${`${path} ${synopsis(action)}`.trim()}

${wrap(paragraph, WIDTH).join('\n')}

${args.length > 0 ? 'Arguments and options' : 'Options'}:
${columns([...args, ...options, ['-h, --help', 'show this help']])}
${command.usesStore ? `\n${storeLine()}\n` : ''}${reachesService(action) ? `${serviceLine()}\n` : ''}`;
}
