import { createToken } from '../auth/tokens.js';
import type { Scope } from '../model/scopes.js';
import { withStore } from './common.js';
import { say } from './output.js';
import { printTokens } from './token-output.js';

/** The token commands on the store DATABASE_URL names: an operator on the server's machine. Each write names the store. */

export async function create(name: string, scopes: readonly Scope[]): Promise<void> {
  const { secret, record, where } = await withStore(async (store, _config, where) => ({
    ...(await createToken(store.tokens, name, scopes)),
    where,
  }));
  say(`created token ${record.id} "${record.name}" with ${record.scopes.join(' ')} in ${where}; it is shown only this once`);
  process.stdout.write(`${secret}\n`);
}

export async function list(json: boolean): Promise<void> {
  printTokens(await withStore((store) => store.tokens.list()), json);
}

/**
 * The store revokes one token: an active token's id, else an active token's exact name (as `token revoke
 * --url` picks). The same pick, looked up first, names it (its id and name) in what is said.
 */
export async function revoke(idOrName: string): Promise<void> {
  const { revoked, found, where } = await withStore(async (store, _config, where) => {
    const active = (await store.tokens.list()).filter((token) => token.revokedAt === null);
    const found = active.find((token) => token.id === idOrName) ?? active.find((token) => token.name === idOrName);
    return { revoked: await store.tokens.revoke(idOrName), found, where };
  });
  if (!revoked) throw new Error(`no active token with id or name "${idOrName}" in ${where}`);
  say(`revoked token ${found === undefined ? `"${idOrName}"` : `${found.id} "${found.name}"`} in ${where}`);
}
