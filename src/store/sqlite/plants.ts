import { toPlantId, type PlantId } from '../../plants/id.js';
import {
  type ConditionalOptions,
  type DeleteResult,
  type ListOptions,
  type PatchResult,
  type Plant,
  type PlantChanges,
  type PlantExport,
  type PlantImport,
  type PlantPage,
  type PlantStore,
  type PutOptions,
  type PutResult,
  type VersionedPlant,
} from '../store.js';
import { prepare, type Connection } from './connection.js';
import { guard, translate } from './errors.js';
import type { ExportConnections } from './exports.js';
import { toPlant, type PlantRow } from '../rows.js';
import { pageSql, type PageRow } from './rows.js';
import { TurnReads } from './turn-reads.js';
import { sqliteImport } from './imports.js';
import type { WriteThread } from './writer/thread.js';
import type { BatchTracer } from '../batcher.js';

/**
 * Plants on SQLite: reads on the main thread's connection (those of one turn run together), every write
 * through the writer thread (writer/), exports on connections of their own (exports.ts).
 */
export class SqlitePlants implements PlantStore {
  private readonly getStmt;
  /** Pages: [from the start, after an id] × [all plants, one tag]. */
  private readonly pages;
  private readonly countAll;
  private readonly countTag;
  /** Reads by id and pages: those asked in one turn run together at its end (turn-reads.ts). */
  private readonly reads: TurnReads;

  constructor(
    db: Connection,
    private readonly writer: WriteThread,
    private readonly exports: ExportConnections,
    tracer?: BatchTracer,
  ) {
    this.reads = new TurnReads(translate, tracer);
    this.getStmt = prepare<[PlantId], PlantRow<bigint> & { version: bigint }>(
      db,
      'SELECT id, name, tag, version FROM plants WHERE id = ?',
    ).safeIntegers(true);
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

  patch(id: PlantId, changes: PlantChanges, options: ConditionalOptions = {}): Promise<PatchResult> {
    return this.writer.write({ kind: 'patch', id, name: changes.name, tag: changes.tag, ifMatch: options.ifMatch });
  }

  delete(id: PlantId, options: ConditionalOptions = {}): Promise<DeleteResult> {
    return this.writer.write({ kind: 'delete', id, ifMatch: options.ifMatch });
  }

  export({ tag }: { tag?: string | undefined }): Promise<PlantExport> {
    return this.exports.open(tag);
  }

  /** Rows are staged on the writer thread's connection as they arrive and merged by the commit (imports.ts). */
  startImport(): Promise<PlantImport> {
    return Promise.resolve(sqliteImport(this.writer));
  }
}
