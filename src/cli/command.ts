import { parseArgs } from 'node:util';
import { editDistance, orList } from '../words.js';

/**
 * The command-line tool's commands, each declared once with its usage: `plant-store token create
 * --name NAME`. A command module exports a Command; main.ts lists them in one table, and every help text,
 * every option check and every "did you mean" comes from these declarations. A mistake of use is a
 * UsageError: one line naming the command, and where its help is.
 */

export class UsageError extends Error {}

/** Runs an argument parser of the command's own (scopes, events); what it refuses is a usage error. */
export function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** May be given more than once (its values in order). */
  multiple?: boolean;
  /** The value's name in the usage: `--name NAME`. */
  value?: string;
  required?: boolean;
  /** The values allowed, checked before the action runs and shown in the help. */
  choices?: readonly string[];
  help: string;
}

export interface ArgSpec {
  /** As the usage shows it: `FILE|-`, `ID_OR_NAME`. */
  name: string;
  required: boolean;
  help?: string;
}

/** What an action was given, once checked against its declaration. */
export class Given {
  constructor(
    private readonly values: Record<string, string | boolean | Array<string | boolean> | undefined>,
    readonly args: string[],
  ) {}

  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' ? value : undefined;
  }

  strings(name: string): string[] | undefined {
    const value = this.values[name];
    return Array.isArray(value) ? value.map(String) : undefined;
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }
}

/** One thing a command does: `token create`, or the whole of a command that has no actions (`migrate`). */
export interface Action {
  summary: string;
  /** More about it, for its help: a paragraph or a few. */
  details?: string;
  args?: ArgSpec[];
  options?: Record<string, OptionSpec>;
  run(given: Given): Promise<void>;
}

export interface Command {
  name: string;
  summary: string;
  /** Its actions by name (`token create`), or, for a command without any, what it does (`migrate`). */
  actions: Record<string, Action> | Action;
  /** Opens the store DATABASE_URL names: its help says which one that is. */
  usesStore: boolean;
}

export function isAction(actions: Command['actions']): actions is Action {
  return typeof (actions as Action).run === 'function';
}

/** `--name NAME [--scope SCOPE]... FILE|-`: an action's arguments and options as its usage line shows them. */
export function synopsis(action: Action): string {
  const options = Object.entries(action.options ?? {}).map(([name, spec]) => {
    const text = `--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
    return `${spec.required ? text : `[${text}]`}${spec.multiple ? '...' : ''}`;
  });
  const args = (action.args ?? []).map((arg) => (arg.required ? arg.name : `[${arg.name}]`));
  return [...args, ...options].join(' ');
}

/** The closest of `names` to a mistyped `name`, when it is close enough to be a typo. */
export function closest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of names) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/**
 * Checks `argv` against an action's declaration and gives what it holds; `help` is true when -h or
 * --help was asked for (nothing else is checked then). Every mistake is a UsageError in words: an
 * unknown option (with the option meant, when close), a missing value or argument, a value not among
 * the choices, an argument too many.
 */
export function parseAction(action: Action, argv: string[]): { help: true } | { help: false; given: Given } {
  const specs = action.options ?? {};
  const config = Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, { type: spec.type, multiple: spec.multiple ?? false }]));
  const { tokens } = parseArgs({ args: argv, options: config, strict: false, allowPositionals: true, tokens: true });
  if (tokens.some((token) => token.kind === 'option' && (token.name === 'help' || token.name === 'h') && !(token.name in specs)))
    return { help: true };

  const values: Record<string, string | boolean | Array<string | boolean>> = {};
  const args: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      args.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    const spec = specs[token.name];
    if (spec === undefined) {
      const meant = closest(token.name, Object.keys(specs));
      throw new UsageError(`unknown option ${token.rawName}${meant ? ` (did you mean --${meant}?)` : ''}`);
    }
    let value: string | boolean;
    if (spec.type === 'boolean') {
      if (token.inlineValue) throw new UsageError(`${token.rawName} takes no value`);
      value = true;
    } else {
      // `--name --scope x` would take "--scope" for the name, and `--name -h` ask for help: say what is
      // missing instead. Any other value that starts with one dash is a value (`--sort -name`, `--q -x`).
      if (token.value === undefined || (!token.inlineValue && (token.value.startsWith('--') || token.value === '-h'))) {
        throw new UsageError(`${token.rawName} needs a value: ${token.rawName} ${spec.value ?? 'VALUE'}`);
      }
      value = token.value;
      if (spec.choices && !spec.choices.includes(value)) {
        throw new UsageError(`${token.rawName} must be ${orList(spec.choices)}, got "${value}"`);
      }
    }
    if (spec.multiple) values[token.name] = [...((values[token.name] as string[] | undefined) ?? []), value];
    else if (values[token.name] !== undefined) throw new UsageError(`${token.rawName} is given twice`);
    else values[token.name] = value;
  }

  for (const [name, spec] of Object.entries(specs)) {
    if (spec.required && values[name] === undefined) throw new UsageError(`--${name} ${spec.value ?? 'VALUE'} is required`);
  }
  const declared = action.args ?? [];
  const missing = declared.slice(args.length).find((arg) => arg.required);
  if (missing) throw new UsageError(`${missing.name} is missing`);
  if (args.length > declared.length) throw new UsageError(`unexpected argument "${args[declared.length]!}"`);
  return { help: false, given: new Given(values, args) };
}
