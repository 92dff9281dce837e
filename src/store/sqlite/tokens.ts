import { toToken, type TokenRow } from '../rows.js';
import { DuplicateTokenNameError, type NewToken, type TokenRecord, type TokenStore } from '../store.js';
import type { WriteOf } from './writer/protocol.js';
import { prepare, type Connection } from './connection.js';
import { guard } from './errors.js';
import type { WriteThread } from './writer/thread.js';

/**
 * The writer thread's message that stores a token, made now (its time of creation, in milliseconds);
 * `secret` for its outcome (store/writes.ts), which a request shows, never stored.
 */
export function createTokenOp(token: NewToken, secret = ''): WriteOf<'createToken'> {
  return { kind: 'createToken', ...token, scopes: token.scopes.join(' '), createdAt: new Date().toISOString(), secret };
}

/** Tokens on SQLite: reads on the main thread's connection, writes through the writer thread. */
export class SqliteTokens implements TokenStore {
  private readonly byHash;
  private readonly byId;
  private readonly all;
  private readonly total;

  constructor(
    db: Connection,
    private readonly writer: WriteThread,
  ) {
    this.byHash = prepare<[Buffer], TokenRow & { hash: Buffer }>(db, 'SELECT * FROM tokens WHERE hash = ? AND revoked_at IS NULL');
    this.byId = prepare<[string], TokenRow>(db, 'SELECT * FROM tokens WHERE id = ?');
    this.all = prepare<[], TokenRow>(db, 'SELECT * FROM tokens ORDER BY created_at, id');
    this.total = prepare<[], number>(db, 'SELECT count(*) FROM tokens').pluck();
  }

  async create(token: NewToken): Promise<TokenRecord> {
    const made = await this.writer.write(createTokenOp(token));
    if (made === 'name-taken') throw new DuplicateTokenNameError(token.name);
    return made.token;
  }

  findActiveByHash(hash: Buffer): Promise<(TokenRecord & { hash: Buffer }) | undefined> {
    return guard(() => {
      const row = this.byHash.get(hash);
      return row && { ...toToken(row), hash: row.hash };
    });
  }

  get(id: string): Promise<TokenRecord | undefined> {
    return guard(() => {
      const row = this.byId.get(id);
      return row && toToken(row);
    });
  }

  list(): Promise<TokenRecord[]> {
    return guard(() => this.all.all().map(toToken));
  }

  revoke(idOrName: string, { byId = false }: { byId?: boolean } = {}): Promise<boolean> {
    return this.writer.write({ kind: 'revokeToken', idOrName, byId, at: new Date().toISOString() });
  }

  count(): Promise<number> {
    return guard(() => this.total.get()!);
  }
}
