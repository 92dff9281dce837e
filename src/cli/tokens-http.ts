import { randomUUID } from 'node:crypto';
import type { Scope } from '../model/scopes.js';
import type { TokenRecord } from '../store/store.js';
import { PAGE_LIMIT_MAX } from '../tokens/schema.js';
import { andList } from '../words.js';
import { AnswerLostError, Api, ApiError, nextStart } from './api.js';
import { TOKEN_VARIABLE, type ApiTarget } from './api-target.js';
import { say } from './output.js';
import { printTokens } from './token-output.js';

/**
 * The token commands through a running service's API (--url): POST /tokens, GET /tokens, DELETE
 * /tokens/{id}, with the token in PLANT_STORE_TOKEN (which needs tokens:manage, and grants only the scopes
 * it holds itself). Nothing here opens a store; what the service refuses comes out as its message.
 */

/** GET /tokens's query parameters, as the CLI sends them (test/cli/api-types.test.ts holds them to the document's). */
export type TokenListQuery = {
  state?: 'active' | 'revoked';
  limit?: number;
  after?: string | undefined;
};

/** DELETE /tokens/{id}'s query parameters. */
export type RevokeQuery = {
  self?: boolean;
};

/** POST /tokens's body. */
export interface NewTokenBody {
  name: string;
  scopes: Scope[];
}

/** POST /tokens's answer: the token, and its secret, this once. */
export type CreatedTokenAnswer = TokenRecord & { secret: string };

/** A name as a shell takes it in a command shown to be run: quoted unless it is plain. */
function shellWord(text: string): string {
  return /^[\w.,:@%+=/-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * POST /tokens with an Idempotency-Key of its own: should the connection be lost before the answer, the
 * request is sent once more with the same key, and the service answers it with the first one's answer (the
 * same token, the same secret) if the first was done, rather than make a second token.
 */
export async function create(target: ApiTarget, name: string, scopes: readonly Scope[]): Promise<void> {
  const api = await Api.connect(target);
  const body: NewTokenBody = { name, scopes: [...scopes] };
  const answer = await api
    .call('post', '/tokens', { body, headers: { 'idempotency-key': randomUUID() } }, { retry: 'Idempotency-Key' })
    .catch((error: unknown) => {
      if (!(error instanceof AnswerLostError)) throw error;
      throw new Error(
        `${error.message}: the token may have been made, its secret lost; "plant-store token list --url ${api.where}" shows whether it was, and "plant-store token revoke ${shellWord(name)} --url ${api.where}" revokes it`,
      );
    });
  const made = answer.data as CreatedTokenAnswer;
  say(`created token ${made.id} "${made.name}" with ${made.scopes.join(' ')} at ${api.where}; it is shown only this once`);
  process.stdout.write(`${made.secret}\n`);
}

/** The ids of the tokens a service accepts and does not store (static tokens, JWTs), as GET /token names them. */
const UNSTORED_ID = /^(?:static|jwt):/;

/** The one of `tokens` revoked last (names are unique among active tokens only: several revoked ones may share one). */
function lastRevoked(tokens: readonly TokenRecord[]): TokenRecord | undefined {
  return tokens.reduce<TokenRecord | undefined>(
    (last, token) => (last === undefined || (token.revokedAt ?? '') > (last.revokedAt ?? '') ? token : last),
    undefined,
  );
}

/** Every token, active and revoked, page after page (Link rel="next"). */
async function everyToken(api: Api): Promise<{ tokens: TokenRecord[]; unlisted: string | null }> {
  const tokens: TokenRecord[] = [];
  let unlisted: string | null = null;
  let start: ReturnType<typeof nextStart> = {};
  while (start !== undefined) {
    const query: TokenListQuery = { limit: PAGE_LIMIT_MAX, ...start };
    const { data, response } = await api.call('get', '/tokens', { params: { query } });
    tokens.push(...(data as TokenRecord[]));
    unlisted ??= response.headers.get('unlisted-token-sources');
    start = nextStart(response.headers.get('link'));
  }
  return { tokens, unlisted };
}

/** The kinds of token Unlisted-Token-Sources names, in words. */
const SOURCES: Record<string, string> = { static: 'static tokens (PLANT_STORE_TOKENS)', jwt: "JWTs (its identity provider's)" };

export async function list(target: ApiTarget, json: boolean): Promise<void> {
  const api = await Api.connect(target);
  const { tokens, unlisted } = await everyToken(api);
  printTokens(tokens, json);
  const sources = (unlisted ?? '')
    .split(',')
    .map((source) => source.trim())
    .filter((source) => source !== '');
  if (sources.length > 0)
    say(
      `plant-store: not listed: ${andList(sources.map((source) => SOURCES[source] ?? source))}, which ${api.where} also accepts; they are not stored there, so they are neither listed nor revoked here`,
    );
}

/**
 * DELETE /tokens/{id}. The API revokes by id only, so the token is first looked up (GET /tokens): an active
 * token's id, else an active token's exact name; a revoked one is named as such, an unknown one as unknown,
 * before anything is sent. The token the command itself is sent with is revoked only with `self`
 * (?self=true), as the service asks.
 */
export async function revoke(target: ApiTarget, idOrName: string, self: boolean): Promise<void> {
  const api = await Api.connect(target);
  const { tokens } = await everyToken(api);
  const active = tokens.filter((token) => token.revokedAt === null);
  const found = active.find((token) => token.id === idOrName) ?? active.find((token) => token.name === idOrName);
  const unknown = `no token with the id or name "${idOrName}" at ${api.where}`;
  if (found === undefined) {
    const revoked = tokens.find((token) => token.id === idOrName) ?? lastRevoked(tokens.filter((token) => token.name === idOrName));
    if (revoked !== undefined)
      throw new Error(`token ${revoked.id} "${revoked.name}" at ${api.where} is revoked already (since ${revoked.revokedAt}): it is refused there`);
    // The id of a token the service accepts without storing it (GET /token names it): the service says what it is.
    if (!UNSTORED_ID.test(idOrName)) throw new Error(`${unknown} ("plant-store token list --url ${api.where}" lists them)`);
  }
  const which = found === undefined ? `token ${idOrName}` : `token ${found.id} "${found.name}"`;
  const query: RevokeQuery = self ? { self: true } : {};
  await api.call('delete', '/tokens/{id}', { params: { path: { id: found?.id ?? idOrName }, query } }).catch((error: unknown) => {
    if (!(error instanceof ApiError)) throw error;
    if (error.code === 'token_is_own')
      throw new Error(
        `${which} is the token this command is sent with (${TOKEN_VARIABLE}): give --self to revoke it all the same; it then stops working within a second`,
      );
    // Not stored, or revoked meanwhile by another client: the service says which, and since when.
    if (error.code === 'not_found' || error.code === 'token_revoked')
      throw new Error(`${found === undefined ? unknown : `${which} at ${api.where}`}: ${error.message}`);
    throw error;
  });
  say(`revoked ${which} at ${api.where}; it is refused within a second`);
}
