import { DEFAULT_TOKEN_SCOPES, parseScopes, SCOPES } from '../model/scopes.js';
import { createToken } from '../auth/tokens.js';
import { isTokenName, TOKEN_NAME_MAX } from '../model/token-name.js';
import { usage, UsageError, type Command } from './command.js';
import { withStore } from './common.js';
import { printJson, printTable, say } from './output.js';

/** `plant-store token create|list|revoke`: the service's bearer tokens, kept in the store as hashes. */
export const tokenCommand: Command = {
  name: 'token',
  summary: 'Bearer tokens for the API, kept in the store (only their hashes): make, list and revoke them.',
  usesStore: true,
  actions: {
    create: {
      summary: 'make a token; prints it once, alone on stdout',
      details:
        'The token goes to stdout alone (TOKEN=$(plant-store token create --name ci)); what was made goes to stderr.\nA running server accepts it at once.',
      options: {
        name: {
          type: 'string',
          value: 'NAME',
          required: true,
          help: `what to call it: unique among active tokens, at most ${TOKEN_NAME_MAX} characters`,
        },
        scope: {
          type: 'string',
          value: 'SCOPE',
          multiple: true,
          help: `a scope it gets, of ${SCOPES.join(', ')}; or several, comma-separated (default: ${DEFAULT_TOKEN_SCOPES.join(' and ')})`,
        },
      },
      async run(given) {
        const name = given.string('name')!;
        // The name is how an operator lists and revokes a token: one printable line, short enough for a table.
        if (!isTokenName(name)) throw new UsageError(`--name must be 1 to ${TOKEN_NAME_MAX} characters, without control characters`);
        const requested = given.strings('scope');
        const scopes = requested ? usage(() => parseScopes(requested.join(' '))) : [...DEFAULT_TOKEN_SCOPES];
        if (scopes.length === 0) throw new UsageError('--scope must name at least one scope');
        const { secret, record, where } = await withStore(async (store, _config, where) => ({
          ...(await createToken(store.tokens, name, scopes)),
          where,
        }));
        say(`created token ${record.id} "${record.name}" with ${record.scopes.join(' ')} in ${where}; it is shown only this once`);
        process.stdout.write(`${secret}\n`);
      },
    },
    list: {
      summary: 'list tokens (never their secrets)',
      options: { json: { type: 'boolean', help: 'as JSON, one object per token' } },
      async run(given) {
        const tokens = await withStore((store) => store.tokens.list());
        if (given.flag('json')) return printJson(tokens);
        printTable(
          ['ID', 'NAME', 'SCOPES', 'CREATED', 'STATE'],
          tokens.map((t) => [t.id, t.name, t.scopes.join(' '), t.createdAt, t.revokedAt ? `revoked ${t.revokedAt}` : 'active']),
        );
      },
    },
    revoke: {
      summary: 'revoke a token; a running server refuses it within a second',
      args: [{ name: 'ID_OR_NAME', required: true, help: 'the id or the name of an active token (token list shows both)' }],
      async run(given) {
        const target = given.args[0]!;
        const { revoked, where } = await withStore(async (store, _config, where) => ({ revoked: await store.tokens.revoke(target), where }));
        if (!revoked) throw new Error(`no active token with id or name "${target}" in ${where}`);
        say(`revoked token "${target}" in ${where}`);
      },
    },
  },
};
