import type { Config } from '../config/config.js';
import { databaseKind, redactUrl, sqlitePath } from '../store/database-url.js';
import { DuplicateTokenNameError, type Store } from '../store/store.js';
import { SCOPES } from '../model/scopes.js';
import { createToken } from './tokens.js';

/**
 * A fresh install must be usable without reading docs first: with no static token configured and no
 * token ever stored, make one full-access token and show it once. Only its hash is kept. A store whose
 * tokens were all revoked gets none: the operator revoked them on purpose.
 */
export async function bootstrapToken(
  store: Store,
  config: Pick<Config, 'tokens' | 'databaseUrl' | 'host' | 'port'>,
  write: (text: string) => void,
): Promise<void> {
  if (config.tokens.length > 0 || (await store.tokens.count()) > 0) return;
  let secret: string;
  try {
    ({ secret } = await createToken(store.tokens, 'initial', SCOPES));
  } catch (error) {
    // Several instances starting at once on one empty database: one of them made the token and showed it.
    if (error instanceof DuplicateTokenNameError) return;
    throw error;
  }
  // Through the running service first: it reaches the store it serves, whatever the folder or the machine
  // the command runs in. The store form is for this host, with the server's DATABASE_URL spelt out: run
  // without it beside a server on PostgreSQL, the CLI would make its token in a SQLite file no server reads.
  write(
    `\nCreated the first access token (full access). It is shown only this once; keep it somewhere safe:\n\n` +
      `    ${secret}\n\n` +
      `Send it with every request as the header "Authorization: Bearer ${secret}".\n` +
      `Make more tokens, each with only the scopes it needs, through this server (from any folder or machine that reaches it):\n\n` +
      `    PLANT_STORE_TOKEN=${secret} npx plant-store token create --url ${serviceUrl(config)} --name <name> --scope plants:read\n\n` +
      `or on this host, in this server's store${passwordNote(config.databaseUrl)}:\n\n` +
      `    ${tokenCreateCommand(config.databaseUrl)} --scope plants:read\n\n`,
  );
}

/**
 * The address a command on this host reaches the server at: HOST, or loopback for a wildcard address
 * (0.0.0.0, ::); PORT, or a placeholder where the system picks it (PORT=0: the log's line "Server
 * listening at …" names it).
 */
function serviceUrl({ host, port }: Pick<Config, 'host' | 'port'>): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${reachable}:${port === 0 ? '<port>' : port}`;
}

/** DATABASE_URL as a command run from any folder reads it: a SQLite file by its absolute path; never a password. */
function absoluteUrl(url: string): string {
  return databaseKind(url) === 'sqlite' ? `file:${sqlitePath(url)}` : redactUrl(url);
}

/** The command that makes a token in the store `databaseUrl` names, from any folder. */
function tokenCreateCommand(databaseUrl: string): string {
  return `DATABASE_URL='${absoluteUrl(databaseUrl)}' npx plant-store token create --name <name>`;
}

/** Said when the URL shown lost its password: it is never printed. */
function passwordNote(databaseUrl: string): string {
  return redactUrl(databaseUrl) === databaseUrl ? '' : ' (with the password in place of ***)';
}

/**
 * After every token was revoked nothing could call the API, and nothing said so: when the store holds no
 * active token and none is configured (static tokens, a JWT key), one line says how to make one, with the
 * DATABASE_URL the command must run against.
 */
export async function warnWithoutTokens(
  store: Store,
  config: Pick<Config, 'tokens' | 'jwtJwksUrl' | 'jwtPublicKey' | 'jwtSecret' | 'databaseUrl'>,
  write: (text: string) => void,
): Promise<void> {
  if (config.tokens.length > 0 || config.jwtJwksUrl !== '' || config.jwtPublicKey !== '' || config.jwtSecret !== '') return;
  if ((await store.tokens.list()).some((token) => token.revokedAt === null)) return;
  write(
    `plant-store: no token can call the API (every stored token is revoked, and none is configured): make one with ` +
      `${tokenCreateCommand(config.databaseUrl)}${passwordNote(config.databaseUrl)}\n`,
  );
}
