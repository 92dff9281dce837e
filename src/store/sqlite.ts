import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import type { Scope } from '../auth/scopes.js';
import { toPlantId, type PlantId } from '../plants/id.js';
import { sqlitePath } from './database-url.js';
import { SQLITE_MIGRATIONS } from './migrations/sqlite.js';
import {
  classifySqliteError,
  configureConnection,
  pageSql,
  toPlant,
  type PageRow,
  type PlantRow,
  type SqliteConnectionSettings,
} from './sqlite-rows.js';
import { openConnection, prepare, type Connection } from './sqlite-connection.js';
import { SqliteWebhooks } from './sqlite-webhooks.js';
import {
  DuplicateTokenNameError,
  StoreBusyError,
  StoreUnavailableError,
  ImportConflictError,
  type IfMatch,
  type ListOptions,
  type PlantPage,
  type Plant,
  type PlantChanges,
  type PlantExport,
  type PlantImport,
  type PlantStore,
  type PutOptions,
  type PutResult,
  type VersionedPlant,
  type Store,
  type CommitObserver,
  type TokenRecord,
  type TokenStore,
} from './store.js';
import { stageRows } from './sqlite-writes.js';
import { TurnReads } from './turn-reads.js';
import { WriteThread } from './write-thread.js';

export interface SqliteOptions extends SqliteConnectionSettings {
  /** Writes waiting for the writer thread at most (WRITE_QUEUE_LIMIT). */
  writeQueueLimit?: number;
  /** Told of every committed batch of writes (metrics). */
  onCommit?: CommitObserver | undefined;
}

const DEFAULT_WRITE_QUEUE_LIMIT = 10_000;

/** A better-sqlite3 error as the store reports it: an outage becomes StoreUnavailableError (a 503), anything else stays a bug. */
function translate(error: unknown): Error {
  const classified = classifySqliteError(error);
  if (classified.unavailable) return new StoreUnavailableError(`SQLite: ${classified.code}`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

/** Runs a read, its errors translated. */
function guardSync<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw translate(error);
  }
}

/** Runs a read on the main thread's connection, as a promise like every store call. */
function guard<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(translate(error));
  }
}

/**
 * The SQLite store: one file, WAL mode. Reads run on the main thread's connection (WAL: they see every
 * committed batch); every write goes through the writer thread (write-thread.ts), which commits writes
 * that arrive together in one transaction.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly plants: PlantStore;
  private readonly exports: ExportConnections;
  readonly tokens: TokenStore;
  readonly webhooks: SqliteWebhooks;

  private constructor(
    private readonly db: Database.Database,
    private readonly writer: WriteThread,
    path: string,
  ) {
    this.exports = new ExportConnections(path);
    this.plants = new SqlitePlants(db, writer, this.exports);
    this.tokens = new SqliteTokens(db, writer);
    this.webhooks = new SqliteWebhooks(db, writer, guard);
  }

  static open(url: string, options: SqliteOptions): SqliteStore {
    const path = sqlitePath(url);
    try {
      mkdirSync(dirname(path), { recursive: true });
      const db = openConnection(path);
      configureConnection(db, options);
      db.exec('PRAGMA journal_mode = WAL');
      // 16 MB of page cache for reads (SQLite's default is 2 MB): keyset pages over a million plants
      // land on random B-tree pages, and with 2 MB a page of 1M cost 25-40% more CPU than one of 1k.
      db.exec('PRAGMA cache_size = -16000');
      migrate(db);
      const writer = new WriteThread(
        { path, synchronous: options.synchronous, busyTimeoutMs: options.busyTimeoutMs },
        options.writeQueueLimit ?? DEFAULT_WRITE_QUEUE_LIMIT,
        options.onCommit,
      );
      return new SqliteStore(db, writer, path);
    } catch (error) {
      throw translate(error);
    }
  }

  ping(): Promise<void> {
    return guard(() => {
      prepare(this.db, 'SELECT 1').get();
    });
  }

  async close(): Promise<void> {
    await this.writer.close();
    this.exports.close();
    if (this.db.open) this.db.close();
  }
}

/** Applies the migrations not yet recorded, each in its own transaction. */
function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(prepare(db, 'SELECT version FROM schema_migrations').pluck().all() as number[]);
  const record = prepare(db, 'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const m of SQLITE_MIGRATIONS) {
    if (applied.has(m.version)) continue;
    // IMMEDIATE takes the write lock first, so two processes starting at once apply each migration once.
    db.transaction(() => {
      const again = prepare(db, 'SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
      if (again) return;
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
    }).immediate();
  }
}

/** Plants are exported this many at a time, each chunk read from the export's own snapshot. */
const EXPORT_CHUNK = 1000;
let imports = 0;

/** Exports running at once at most; beyond, an export is refused as busy (503) rather than queued. */
const EXPORTS_AT_ONCE = 8;

/**
 * Read connections for exports, opened when first needed and kept: better-sqlite3's objects must not be
 * left to the garbage collector (sqlite-connection.ts), so an export borrows one and gives it back.
 */
class ExportConnections {
  private readonly idle: Connection[] = [];
  private lent = 0;

  constructor(private readonly path: string) {}

  borrow(): Connection {
    if (this.lent >= EXPORTS_AT_ONCE) throw new StoreBusyError(EXPORTS_AT_ONCE, 'exports');
    const db = this.idle.pop() ?? openConnection(this.path, { readonly: true, fileMustExist: true });
    this.lent++;
    return db;
  }

  giveBack(db: Connection): void {
    this.lent--;
    if (db.inTransaction) db.exec('ROLLBACK');
    this.idle.push(db);
  }

  close(): void {
    for (const db of this.idle) if (db.open) db.close();
  }
}

/**
 * An export reads on a connection of its own, in one read transaction (WAL: a snapshot that later
 * commits do not change), a chunk at a time by key, so that the main connection keeps serving and
 * memory stays flat.
 */
class SqliteExport implements PlantExport {
  private readonly first;
  private readonly next;
  private readonly total;
  private readonly args: string[];
  private released = false;

  constructor(
    private readonly connections: ExportConnections,
    private readonly db: Connection,
    tag: string | undefined,
  ) {
    // A deferred transaction takes its snapshot at its first read: read at once, so that the export is
    // the store as it was when it was asked for.
    db.exec('BEGIN');
    prepare(db, 'SELECT 1 FROM plants LIMIT 1').get();
    const cols = 'SELECT id, name, tag FROM plants';
    this.args = tag === undefined ? [] : [tag];
    const where = tag === undefined ? '' : 'tag = ? AND ';
    this.first = prepare<unknown[], PlantRow>(db, `${cols} ${tag === undefined ? '' : 'WHERE tag = ?'} ORDER BY id LIMIT ?`).safeIntegers(true);
    this.next = prepare<unknown[], PlantRow>(db, `${cols} WHERE ${where}id > ? ORDER BY id LIMIT ?`).safeIntegers(true);
    this.total = prepare<unknown[], number>(db, `SELECT count(*) FROM plants ${tag === undefined ? '' : 'WHERE tag = ?'}`).pluck();
  }

  count(): Promise<number> {
    return guard(() => this.total.get(...this.args)!);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Plant[]> {
    try {
      let rows = guardSync(() => this.first.all(...this.args, EXPORT_CHUNK));
      while (rows.length > 0) {
        yield rows.map(toPlant);
        if (rows.length < EXPORT_CHUNK || this.released) break;
        const last = rows.at(-1)!.id;
        rows = guardSync(() => this.next.all(...this.args, last, EXPORT_CHUNK));
      }
    } finally {
      await this.close();
    }
  }

  close(): Promise<void> {
    if (!this.released) {
      this.released = true;
      this.connections.giveBack(this.db);
    }
    return Promise.resolve();
  }
}

class SqlitePlants implements PlantStore {
  private readonly getStmt;
  /** Pages: [from the start, after an id] × [all plants, one tag]. */
  private readonly pages;
  private readonly countAll;
  private readonly countTag;
  /** Reads by id and pages: those asked in one turn run together at its end (turn-reads.ts). */
  private readonly reads = new TurnReads(translate);

  constructor(
    db: Database.Database,
    private readonly writer: WriteThread,
    private readonly exports: ExportConnections,
  ) {
    this.getStmt = prepare<[PlantId], PlantRow & { version: bigint }>(db, 'SELECT id, name, tag, version FROM plants WHERE id = ?').safeIntegers(
      true,
    );
    const page = (where: string, tagged: boolean) =>
      prepare<[{ limit: number; after?: PlantId; tag?: string }], PageRow>(db, pageSql(where, tagged)).raw(true).safeIntegers(true);
    this.pages = {
      first: page('', false),
      next: page('WHERE id > @after', false),
      firstTagged: page('WHERE tag = @tag', true),
      nextTagged: page('WHERE tag = @tag AND id > @after', true),
    };
    this.countAll = prepare<[], number>(db, 'SELECT count(*) FROM plants').pluck();
    this.countTag = prepare<[string], number>(db, 'SELECT count(*) FROM plants WHERE tag = ?').pluck();
  }

  get(id: PlantId): Promise<VersionedPlant | undefined> {
    return this.reads.run(() => {
      const row = this.getStmt.get(id);
      return row && { plant: toPlant(row), version: Number(row.version) };
    });
  }

  page({ limit, after, tag }: ListOptions): Promise<PlantPage> {
    return this.reads.run(() => {
      const statement =
        tag === undefined
          ? after === undefined
            ? this.pages.first
            : this.pages.next
          : after === undefined
            ? this.pages.firstTagged
            : this.pages.nextTagged;
      const [json, count, last, more] = statement.get({ limit, after, tag })!;
      return { json, count: Number(count), next: more === 1n && last !== null ? toPlantId(last) : undefined };
    });
  }

  count(tag?: string): Promise<number> {
    return guard(() => (tag === undefined ? this.countAll.get()! : this.countTag.get(tag)!));
  }

  put(plant: Plant, options: PutOptions = {}): Promise<PutResult> {
    return this.writer.write({
      kind: 'put',
      id: plant.id,
      name: plant.name,
      tag: plant.tag ?? null,
      createOnly: options.createOnly === true,
      ifMatch: options.ifMatch,
    });
  }

  patch(
    id: PlantId,
    changes: PlantChanges,
    options: { ifMatch?: IfMatch | undefined } = {},
  ): Promise<VersionedPlant | 'not-found' | 'precondition-failed'> {
    return this.writer.write({ kind: 'patch', id, name: changes.name, tag: changes.tag, ifMatch: options.ifMatch });
  }

  delete(id: PlantId, options: { ifMatch?: IfMatch | undefined } = {}): Promise<'deleted' | 'not-found' | 'precondition-failed'> {
    return this.writer.write({ kind: 'delete', id, ifMatch: options.ifMatch });
  }

  export({ tag }: { tag?: string | undefined }): Promise<PlantExport> {
    return guard(() => {
      const db = this.exports.borrow();
      try {
        return new SqliteExport(this.exports, db, tag);
      } catch (error) {
        this.exports.giveBack(db);
        throw error;
      }
    });
  }

  startImport(): Promise<PlantImport> {
    const importId = ++imports;
    const writer = this.writer;
    let done = false;
    return Promise.resolve({
      async add(rows) {
        if (rows.length > 0) await writer.write({ kind: 'importStage', importId, rows: stageRows(rows) });
      },
      async commit({ createOnly }) {
        const result = await writer.write({ kind: 'importCommit', importId, createOnly });
        done = true;
        if ('conflict' in result) throw new ImportConflictError(result.conflict);
        return result;
      },
      async abort() {
        if (done) return;
        done = true;
        await writer.write({ kind: 'importAbort', importId });
      },
    });
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
  private readonly byHash;
  private readonly all;
  private readonly total;

  constructor(
    db: Database.Database,
    private readonly writer: WriteThread,
  ) {
    this.byHash = prepare<[Buffer], TokenRow>(db, 'SELECT * FROM tokens WHERE hash = ? AND revoked_at IS NULL');
    this.all = prepare<[], TokenRow>(db, 'SELECT * FROM tokens ORDER BY created_at, id');
    this.total = prepare<[], number>(db, 'SELECT count(*) FROM tokens').pluck();
  }

  async create(token: { id: string; name: string; hash: Buffer; scopes: Scope[] }): Promise<TokenRecord> {
    const createdAt = new Date().toISOString();
    const outcome = await this.writer.write({ kind: 'createToken', ...token, scopes: token.scopes.join(' '), createdAt });
    if (outcome === 'duplicate-name') throw new DuplicateTokenNameError(token.name);
    return { id: token.id, name: token.name, scopes: token.scopes, createdAt, revokedAt: null };
  }

  findActiveByHash(hash: Buffer): Promise<(TokenRecord & { hash: Buffer }) | undefined> {
    return guard(() => {
      const row = this.byHash.get(hash);
      return row && { ...toToken(row), hash: row.hash };
    });
  }

  list(): Promise<TokenRecord[]> {
    return guard(() => this.all.all().map(toToken));
  }

  revoke(idOrName: string): Promise<boolean> {
    return this.writer.write({ kind: 'revokeToken', idOrName, at: new Date().toISOString() });
  }

  count(): Promise<number> {
    return guard(() => this.total.get()!);
  }
}
