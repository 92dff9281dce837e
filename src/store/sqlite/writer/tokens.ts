import type { Scope } from '../../../model/scopes.js';
import { prepare, type Connection } from '../connection.js';
import type { WriteOf, WriteResults } from './protocol.js';

type Ops = { [K in 'createToken' | 'revokeToken']: (op: WriteOf<K>) => WriteResults[K] };

/** The token writes of the writer thread. */
export function sqliteTokenWrites(db: Connection): Ops {
  const activeTokenNamed = prepare<[string]>(db, 'SELECT 1 FROM tokens WHERE name = ? AND revoked_at IS NULL');
  const insertToken = prepare<[string, string, Buffer, string, string]>(
    db,
    'INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  // An active token's id, else an active token's name: a name may be another token's id, and only one is revoked.
  const revokeToken = prepare<[string, string, string, string]>(
    db,
    'UPDATE tokens SET revoked_at = ? WHERE revoked_at IS NULL AND (id = ? OR (name = ? AND NOT EXISTS (SELECT 1 FROM tokens WHERE id = ? AND revoked_at IS NULL)))',
  );
  const revokeTokenById = prepare<[string, string]>(db, 'UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  return {
    createToken({ id, name, hash, scopes, createdAt, secret }) {
      // A name an active token has is answered, not thrown: a throw would fail the whole batch.
      if (activeTokenNamed.get(name)) return 'name-taken';
      // A Buffer arrives as a plain Uint8Array after the thread hop.
      insertToken.run(id, name, Buffer.from(hash), scopes, createdAt);
      return { token: { id, name, scopes: scopes.split(' ') as Scope[], createdAt, revokedAt: null }, secret };
    },
    revokeToken({ idOrName, byId, at }) {
      return (byId ? revokeTokenById.run(at, idOrName) : revokeToken.run(at, idOrName, idOrName, idOrName)).changes > 0;
    },
  };
}
