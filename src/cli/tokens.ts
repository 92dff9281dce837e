import { DEFAULT_TOKEN_SCOPES, parseScopes, SCOPES } from '../model/scopes.js';
import { isTokenName, TOKEN_NAME_MAX, TOKEN_NAME_RULE } from '../model/token-name.js';
import { apiTarget, TOKEN_VARIABLE, URL_OPTION } from './api-target.js';
import { usage, UsageError, type Command } from './command.js';
import * as http from './tokens-http.js';
import * as local from './tokens-store.js';

/**
 * `plant-store token create|list|revoke`: the service's bearer tokens, kept in the store as hashes. On the
 * store DATABASE_URL names (an operator on the server's machine), or through a running service's API with
 * --url or PLANT_STORE_URL (from anywhere, with a token that has tokens:manage).
 */

const MANAGES = 'with tokens:manage';

export const tokenCommand: Command = {
  name: 'token',
  summary:
    'Bearer tokens for the API, kept in the store (only their hashes): make, list and revoke them; on the store, or through a service with --url.',
  usesStore: true,
  actions: {
    create: {
      summary: 'make a token; prints it once, alone on stdout',
      details: `TOKEN=$(plant-store token create --name ci) keeps it. Through --url it gets only scopes ${TOKEN_VARIABLE}'s token holds (docs/cli.md).`,
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
          help: `a scope it gets (default: ${DEFAULT_TOKEN_SCOPES.join(',')}), or several, comma-separated: ${SCOPES.join(', ')}`,
        },
        url: URL_OPTION,
      },
      async run(given) {
        const name = given.string('name')!;
        // The name is how an operator lists and revokes a token: one printable line, short enough for a table.
        if (!isTokenName(name)) throw new UsageError(`--name must be 1 to ${TOKEN_NAME_MAX} characters, and ${TOKEN_NAME_RULE}`);
        const requested = given.strings('scope');
        const scopes = requested ? usage(() => parseScopes(requested.join(' '))) : [...DEFAULT_TOKEN_SCOPES];
        if (scopes.length === 0) throw new UsageError('--scope must name at least one scope');
        const target = apiTarget(given, MANAGES);
        return target ? http.create(target, name, scopes) : local.create(name, scopes);
      },
    },
    list: {
      summary: 'list tokens (never their secrets)',
      details:
        'A table (id, name, scopes, when made, active or revoked), or with --json one object per token. Through --url every page is followed, ' +
        'and a line on stderr names the kinds of token the service accepts without storing them (static tokens, JWTs).',
      options: { json: { type: 'boolean', help: 'as JSON, one object per token' }, url: URL_OPTION },
      async run(given) {
        const target = apiTarget(given, MANAGES);
        return target ? http.list(target, given.flag('json')) : local.list(given.flag('json'));
      },
    },
    revoke: {
      summary: 'revoke a token; a running server refuses it within a second',
      details: `By id or by name (an active token's id first). Through --url, the token in ${TOKEN_VARIABLE} itself is revoked only with --self.`,
      args: [{ name: 'ID_OR_NAME', required: true, help: 'the id or the name of an active token (token list shows both)' }],
      options: {
        self: {
          type: 'boolean',
          help: `through --url: revoke it even if it is the token in ${TOKEN_VARIABLE}, which then stops working`,
        },
        url: URL_OPTION,
      },
      async run(given) {
        const idOrName = given.args[0]!;
        const target = apiTarget(given, MANAGES);
        if (target) return http.revoke(target, idOrName, given.flag('self'));
        if (given.flag('self')) throw new UsageError(`--self is for --url: on the store, no token is the one the command is sent with`);
        return local.revoke(idOrName);
      },
    },
  },
};
