import { DEFAULT_TOKEN_SCOPES, parseScopes, SCOPES } from '../model/scopes.js';
import { isTokenName, TOKEN_NAME_MAX } from '../model/token-name.js';
import { apiTarget, TOKEN_VARIABLE, URL_OPTION, URL_VARIABLE } from './api.js';
import { usage, UsageError, type Command } from './command.js';
import * as http from './tokens-http.js';
import * as local from './tokens-store.js';

/**
 * `plant-store token create|list|revoke`: the service's bearer tokens, kept in the store as hashes. On the
 * store DATABASE_URL names (an operator on the server's machine), or through a running service's API with
 * --url or PLANT_STORE_URL (from anywhere, with a token that has tokens:manage).
 */

const MANAGES = 'with tokens:manage';

const BOTH_WAYS =
  `Without --url it works on the store DATABASE_URL names; with --url URL (or ${URL_VARIABLE}=URL in the environment) it goes through ` +
  `that service's API instead, with the token in ${TOKEN_VARIABLE} (which needs tokens:manage), and opens no store.`;

export const tokenCommand: Command = {
  name: 'token',
  summary:
    'Bearer tokens for the API, kept in the store (only their hashes): make, list and revoke them; on the store, or through a service with --url.',
  usesStore: true,
  actions: {
    create: {
      summary: 'make a token; prints it once, alone on stdout',
      details:
        'The token goes to stdout alone (TOKEN=$(plant-store token create --name ci)); what was made goes to stderr.\nA running server accepts it at once.\n\n' +
        'Through --url (POST /tokens) the token in PLANT_STORE_TOKEN grants only scopes it holds itself. The request carries an Idempotency-Key: ' +
        'should the connection be lost before the answer, it is sent once more with the same key, and the service answers with the token ' +
        'the first one made (the same secret) rather than make a second. ' +
        BOTH_WAYS,
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
        url: URL_OPTION,
      },
      async run(given) {
        const name = given.string('name')!;
        // The name is how an operator lists and revokes a token: one printable line, short enough for a table.
        if (!isTokenName(name)) throw new UsageError(`--name must be 1 to ${TOKEN_NAME_MAX} characters, without control characters`);
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
        'A table (id, name, scopes, when made, active or revoked), or with --json one object per token. Through --url (GET /tokens) every page ' +
        'is followed; static tokens and JWTs the service also accepts are not stored, so not listed: a line on stderr says which it accepts. ' +
        BOTH_WAYS,
      options: { json: { type: 'boolean', help: 'as JSON, one object per token' }, url: URL_OPTION },
      async run(given) {
        const target = apiTarget(given, MANAGES);
        return target ? http.list(target, given.flag('json')) : local.list(given.flag('json'));
      },
    },
    revoke: {
      summary: 'revoke a token; a running server refuses it within a second',
      details:
        'The API revokes by id only (DELETE /tokens/{id}): through --url a name is first looked up among the active tokens (GET /tokens), ' +
        "an active token's id before an active token's name, and the token found is revoked by its id. " +
        `The token the command is sent with (${TOKEN_VARIABLE}) is revoked only with --self, so that nobody locks themselves out by a slip. ` +
        BOTH_WAYS,
      args: [{ name: 'ID_OR_NAME', required: true, help: 'the id or the name of an active token (token list shows both)' }],
      options: {
        self: {
          type: 'boolean',
          help: `through --url: revoke it even if it is the token in ${TOKEN_VARIABLE} itself, which then stops working within a second`,
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
