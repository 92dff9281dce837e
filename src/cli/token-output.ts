import type { TokenRecord } from '../store/store.js';
import { distinctName, printJson, printTable } from './output.js';

/** Tokens as `token list` prints them, the same from the store and from a service: a table, or JSON (--json). */
export function printTokens(tokens: readonly TokenRecord[], json: boolean): void {
  if (json) return printJson(tokens);
  printTable(
    ['ID', 'NAME', 'SCOPES', 'CREATED', 'STATE'],
    tokens.map((t) => [
      t.id,
      distinctName(t.name, process.stdout),
      t.scopes.join(' '),
      t.createdAt,
      t.revokedAt ? `revoked ${t.revokedAt}` : 'active',
    ]),
  );
}
