import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { PlantId } from '../plants/schema.js';
import { readMigrations } from './migrations.js';
import {
  DuplicateTokenNameError,
  StoreUnavailableError,
  type ListOptions,
  type Plant,
  type PlantChanges,
  type PlantStore,
  type PutOutcome,
  type Scope,
  type Store,
  type TokenRecord,
  type TokenStore,
} from './store.js';
import { WriteBatcher } from './write-batcher.js';
import { WriteThread, type WriteOp } from './write-thread.js';

export interface SqliteOptions {
  /** FULL (default): a commit survives power loss. NORMAL: faster, may lose the last commits on power loss. */
  synchronous: 'FULL' | 'NORMAL';
  /** How long a write waits for another process's lock (the CLI's, say) before it fails. */
  busyTimeoutMs: number;
}

/** The file a `file:` URL names: `file:/abs/path.db`, `file:./relative.db`, `file:///abs/path.db`. */
export function sqlitePath(url: string): string {
  if (url.startsWith('file://')) return fileURLToPath(url);
  return resolve(url.slice('file:'.length));
}

/** Codes that mean the database cannot be used right now, as opposed to a bug in a query. */
const UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|BUSY|LOCKED|CANTOPEN|NOMEM|PROTOCOL|CORRUPT|NOTADB)/;

function translate(error: unknown): unknown {
  if (error instanceof Database.SqliteError) {
    if (UNAVAILABLE.test(error.code)) return new StoreUnavailableError(`SQLite: ${error.code}`, { cause: error });
  }
  return error;
}

function guard<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(translate(error));
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** SQLite hands ids back as bigint (safeIntegers); keep ordinary ones as plain numbers. */
function toId(value: bigint): PlantId {
  return value <= MAX_SAFE && value >= -MAX_SAFE ? Number(value) : value;
}

export interface PlantRow {
  id: bigint;
  name: string;
  tag: string | null;
}

export function toPlant(row: PlantRow): Plant {
  return row.tag === null ? { id: toId(row.id), name: row.name } : { id: toId(row.id), name: row.name, tag: row.tag };
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly plants: PlantStore;
  readonly tokens: TokenStore;
  private readonly db: Database.Database;

  private readonly writer: WriteThread;

  private constructor(db: Database.Database, path: string, options: SqliteOptions) {
    this.db = db;
    const batcher = new WriteBatcher(db, translate);
    // Plant writes commit on a writer thread, so the main thread keeps serving during each fsync;
    // token writes (rare) keep the main-thread batcher.
    this.writer = new WriteThread({ path, synchronous: options.synchronous, busyTimeoutMs: options.busyTimeoutMs }, translate);
    this.plants = new SqlitePlants(db, this.writer);
    this.tokens = new SqliteTokens(db, batcher);
  }

  static open(url: string, options: SqliteOptions): SqliteStore {
    const path = sqlitePath(url);
    try {
      mkdirSync(dirname(path), { recursive: true });
      const db = new Database(path);
      db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${options.synchronous}`);
      // 16 MB of page cache for reads (SQLite's default is 2 MB): keyset pages over a million plants
      // land on random B-tree pages, and with 2 MB a page of 1M cost 25-40% more CPU than one of 1k.
      db.pragma('cache_size = -16000');
      migrate(db);
      return new SqliteStore(db, path, options);
    } catch (error) {
      throw translate(error);
    }
  }

  ping(): Promise<void> {
    return guard(() => {
      this.db.prepare('SELECT 1').get();
    });
  }

  async close(): Promise<void> {
    await this.writer.close();
    if (this.db.open) this.db.close();
  }
}

/** Applies the migrations not yet recorded, each in its own transaction. */
function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const m of readMigrations('sqlite')) {
    if (applied.has(m.version)) continue;
    // IMMEDIATE takes the write lock first, so two processes starting at once apply each migration once.
    db.transaction(() => {
      const again = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
      if (again) return;
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
    }).immediate();
  }
}

class SqlitePlants implements PlantStore {
  private readonly getStmt;
  private readonly firstPage;
  private readonly nextPage;
  private readonly firstTagPage;
  private readonly nextTagPage;

  constructor(
    db: Database.Database,
    private readonly writer: WriteThread,
  ) {
    const cols = 'SELECT id, name, tag FROM plants';
    this.getStmt = db.prepare<[PlantId], PlantRow>(`${cols} WHERE id = ?`).safeIntegers(true);
    this.firstPage = db.prepare<[number], PlantRow>(`${cols} ORDER BY id LIMIT ?`).safeIntegers(true);
    this.nextPage = db.prepare<[PlantId, number], PlantRow>(`${cols} WHERE id > ? ORDER BY id LIMIT ?`).safeIntegers(true);
    this.firstTagPage = db.prepare<[string, number], PlantRow>(`${cols} WHERE tag = ? ORDER BY id LIMIT ?`).safeIntegers(true);
    this.nextTagPage = db.prepare<[string, PlantId, number], PlantRow>(`${cols} WHERE tag = ? AND id > ? ORDER BY id LIMIT ?`).safeIntegers(true);
  }

  get(id: PlantId): Promise<Plant | undefined> {
    return guard(() => {
      const row = this.getStmt.get(id);
      return row && toPlant(row);
    });
  }

  list({ limit, after, tag }: ListOptions): Promise<Plant[]> {
    return guard(() => {
      const rows =
        tag === undefined
          ? after === undefined
            ? this.firstPage.all(limit)
            : this.nextPage.all(after, limit)
          : after === undefined
            ? this.firstTagPage.all(tag, limit)
            : this.nextTagPage.all(tag, after, limit);
      return rows.map(toPlant);
    });
  }

  put(plant: Plant, options: { createOnly?: boolean } = {}): Promise<PutOutcome> {
    const op: WriteOp = ['put', plant.id, plant.name, plant.tag ?? null, options.createOnly === true];
    return this.writer.write<PutOutcome>(op);
  }

  patch(id: PlantId, changes: PlantChanges): Promise<Plant | undefined> {
    return this.writer.write<Plant | undefined>(['patch', id, changes.name, changes.tag]);
  }

  delete(id: PlantId): Promise<boolean> {
    return this.writer.write<boolean>(['delete', id]);
  }
}

interface TokenRow {
  id: string;
  name: string;
  hash: Buffer;
  scopes: string;
  created_at: string;
  revoked_at: string | null;
}

function toToken(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes.split(' ') as Scope[],
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

class SqliteTokens implements TokenStore {
  constructor(
    private readonly db: Database.Database,
    private readonly batcher: WriteBatcher,
  ) {}

  async create(token: { id: string; name: string; hash: Buffer; scopes: Scope[] }): Promise<TokenRecord> {
    const createdAt = new Date().toISOString();
    // A duplicate name is answered, not thrown: a throw would fail the other writes of the batch.
    const created = await this.batcher.write(() => {
      if (this.db.prepare('SELECT 1 FROM tokens WHERE name = ? AND revoked_at IS NULL').get(token.name)) return false;
      this.db
        .prepare('INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(token.id, token.name, token.hash, token.scopes.join(' '), createdAt);
      return true;
    });
    if (!created) throw new DuplicateTokenNameError(token.name);
    return { id: token.id, name: token.name, scopes: token.scopes, createdAt, revokedAt: null };
  }

  findActiveByHash(hash: Buffer): Promise<(TokenRecord & { hash: Buffer }) | undefined> {
    return guard(() => {
      const row = this.db.prepare<[Buffer], TokenRow>('SELECT * FROM tokens WHERE hash = ? AND revoked_at IS NULL').get(hash);
      return row && { ...toToken(row), hash: row.hash };
    });
  }

  list(): Promise<TokenRecord[]> {
    return guard(() => this.db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id').all().map(toToken));
  }

  revoke(idOrName: string): Promise<boolean> {
    const at = new Date().toISOString();
    return this.batcher.write(
      () =>
        this.db.prepare('UPDATE tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL').run(at, idOrName, idOrName).changes > 0,
    );
  }

  count(): Promise<number> {
    return guard(() => this.db.prepare('SELECT count(*) FROM tokens').pluck().get() as number);
  }
}
