import { parseArgs } from 'node:util';
import { DEFAULT_TOKEN_SCOPES, parseScopes, SCOPES } from '../auth/scopes.js';
import { createToken } from '../auth/tokens.js';
import { ConfigError, loadConfig } from '../config.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

const USAGE = `Usage: plant-store <command>

Commands (against the store DATABASE_URL names, the same as the server's):
  token create --name NAME [--scope SCOPE]...  make a token; prints it once, alone on stdout
                                               scopes: ${SCOPES.join(', ')} (default: both)
  token list [--json]                          list tokens (never their secrets)
  token revoke ID_OR_NAME                      revoke a token; a running server refuses it within a second
  migrate                                      apply the schema migrations and exit
`;

class UsageError extends Error {}

/** Runs an argument parser; what it rejects is a usage error (exit 2), not a failure. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

async function withStore<T>(run: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(loadConfig());
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

async function tokenCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = usage(() =>
    parseArgs({
      args: rest,
      allowPositionals: true,
      options: { name: { type: 'string' }, scope: { type: 'string', multiple: true }, json: { type: 'boolean' } },
    }),
  );
  switch (action) {
    case 'create': {
      if (!values.name) throw new UsageError('token create needs --name NAME');
      // The name is how an operator lists and revokes a token: one printable line, short enough for a table.
      if (values.name.length > 64 || /\p{Cc}/u.test(values.name)) {
        throw new UsageError('--name must be at most 64 characters, without control characters');
      }
      const requested = values.scope;
      const scopes = requested ? usage(() => parseScopes(requested.join(' '))) : [...DEFAULT_TOKEN_SCOPES];
      if (scopes.length === 0) throw new UsageError('token create needs at least one --scope');
      const name = values.name;
      const { secret, record } = await withStore((store) => createToken(store.tokens, name, scopes));
      process.stderr.write(`created token ${record.id} "${record.name}" with ${record.scopes.join(' ')}; it is shown only this once\n`);
      process.stdout.write(`${secret}\n`);
      return;
    }
    case 'list': {
      const tokens = await withStore((store) => store.tokens.list());
      if (values.json) {
        process.stdout.write(`${JSON.stringify(tokens, null, 2)}\n`);
        return;
      }
      const rows = tokens.map((t) => [t.id, t.name, t.scopes.join(' '), t.createdAt, t.revokedAt ? `revoked ${t.revokedAt}` : 'active']);
      const table = [['ID', 'NAME', 'SCOPES', 'CREATED', 'STATE'], ...rows];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
      for (const row of table)
        process.stdout.write(
          `${row
            .map((c, i) => c.padEnd(widths[i]!))
            .join('  ')
            .trimEnd()}\n`,
        );
      return;
    }
    case 'revoke': {
      const target = positionals[0] ?? values.name;
      if (!target) throw new UsageError('token revoke needs the id or name of a token');
      const revoked = await withStore((store) => store.tokens.revoke(target));
      if (!revoked) throw new Error(`no active token with id or name "${target}"`);
      process.stderr.write(`revoked token "${target}"\n`);
      return;
    }
    default:
      throw new UsageError(`unknown token command "${action ?? ''}"`);
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (command === 'token') await tokenCommand(args);
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
