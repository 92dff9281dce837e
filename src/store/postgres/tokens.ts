import { toToken, type TokenRow } from '../rows.js';
import type { Query } from './query.js';
import { DuplicateTokenNameError, type NewToken, type TokenRecord, type TokenStore } from '../store.js';

/** A token as PostgreSQL gives it: times as Dates (timestamptz), the hash as bytes. */
interface PostgresTokenRow extends Omit<TokenRow, 'created_at' | 'revoked_at'> {
  hash: Buffer;
  created_at: Date;
  revoked_at: Date | null;
}

function tokenOf(row: PostgresTokenRow): TokenRecord {
  return toToken({ ...row, created_at: row.created_at.toISOString(), revoked_at: row.revoked_at?.toISOString() ?? null });
}

// The partial unique index tokens_active_name (migrations.ts, version 1) lets only one active token carry a name.

/** Bearer tokens on PostgreSQL, by the SHA-256 hash of their secret. */
export class PostgresTokens implements TokenStore {
  constructor(
    private readonly query: Query,
    /** Where a bearer token is looked up: on the connections kept for reads, so that authenticating never waits behind writes. */
    private readonly lookup: Query = query,
  ) {}

  async create(token: NewToken): Promise<TokenRecord> {
    // The time comes from here, in milliseconds, so that the record answered equals the one listed later.
    const createdAt = new Date().toISOString();
    // A name an active token has (the partial unique index tokens_active_name) inserts nothing, rather than
    // failing the statement: a keyed create keeps that refusal in the same transaction (postgres/writes.ts).
    const { rowCount } = await this.query(
      `INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) WHERE revoked_at IS NULL DO NOTHING`,
      [token.id, token.name, token.hash, token.scopes.join(' '), createdAt],
    );
    if (rowCount === 0) throw new DuplicateTokenNameError(token.name);
    return { id: token.id, name: token.name, scopes: token.scopes, createdAt, revokedAt: null };
  }

  async findActiveByHash(hash: Buffer): Promise<(TokenRecord & { hash: Buffer }) | undefined> {
    const { rows } = await this.lookup<PostgresTokenRow>('SELECT * FROM tokens WHERE hash = $1 AND revoked_at IS NULL', [hash]);
    return rows[0] && { ...tokenOf(rows[0]), hash: rows[0].hash };
  }

  async get(id: string): Promise<TokenRecord | undefined> {
    const { rows } = await this.query<PostgresTokenRow>('SELECT * FROM tokens WHERE id = $1', [id]);
    return rows[0] && tokenOf(rows[0]);
  }

  async list(): Promise<TokenRecord[]> {
    // COLLATE "C": byte order, as SQLite sorts text, whatever the database's locale.
    const { rows } = await this.query<PostgresTokenRow>('SELECT * FROM tokens ORDER BY created_at, id COLLATE "C"', []);
    return rows.map(tokenOf);
  }

  async revoke(idOrName: string, { byId = false }: { byId?: boolean } = {}): Promise<boolean> {
    // An active token's id, else an active token's name: a name may be another token's id, and only one is revoked.
    const matching = byId ? 'id = $2' : '(id = $2 OR (name = $2 AND NOT EXISTS (SELECT 1 FROM tokens WHERE id = $2 AND revoked_at IS NULL)))';
    const { rowCount } = await this.query(`UPDATE tokens SET revoked_at = $1 WHERE ${matching} AND revoked_at IS NULL`, [
      new Date().toISOString(),
      idOrName,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async count(): Promise<number> {
    const { rows } = await this.query<{ count: string }>('SELECT count(*) AS count FROM tokens', []);
    return Number(rows[0]?.count ?? 0);
  }
}
