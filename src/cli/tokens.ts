import { parseArgs } from 'node:util';
import { DEFAULT_TOKEN_SCOPES, parseScopes, SCOPES } from '../auth/scopes.js';
import { createToken } from '../auth/tokens.js';
import { printJson, printTable, usage, UsageError, withStore } from './common.js';

export const TOKEN_USAGE = `  token create --name NAME [--scope SCOPE]...  make a token; prints it once, alone on stdout
                                               scopes: ${SCOPES.join(', ')}
                                               (default: ${DEFAULT_TOKEN_SCOPES.join(' and ')})
  token list [--json]                          list tokens (never their secrets)
  token revoke ID_OR_NAME                      revoke a token; a running server refuses it within a second`;

export async function tokenCommand(args: string[]): Promise<void> {
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
      if (values.json) return printJson(tokens);
      printTable(
        ['ID', 'NAME', 'SCOPES', 'CREATED', 'STATE'],
        tokens.map((t) => [t.id, t.name, t.scopes.join(' '), t.createdAt, t.revokedAt ? `revoked ${t.revokedAt}` : 'active']),
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
