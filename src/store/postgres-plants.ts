import { toPlantId, type PlantId } from '../plants/id.js';
import { bodyFor, insertMessages } from './postgres-outbox.js';
import { int8, type Query, type Transaction } from './postgres-query.js';
import type { ListOptions, Plant, PlantChanges, PlantStore, PutOutcome } from './store.js';
import { newEventId } from '../webhooks/events.js';

interface PlantRow {
  id: string;
  name: string;
  tag: string | null;
}

function toPlant(row: PlantRow): Plant {
  const id = toPlantId(row.id);
  return row.tag === null ? { id, name: row.name } : { id, name: row.name, tag: row.tag };
}

// id as text: int8 parsed by toPlantId, whatever type parsers the process has installed. (ORDER BY must then
// name plants.id: a bare "id" there would be the text column and sort "10" before "5".)
const PLANT_COLUMNS = 'SELECT id::text AS id, name, tag FROM plants';

/** Counts the messages of a write's outbox CTE (named q) queued for delivery. */
const QUEUED = `(SELECT count(*) FROM q WHERE status = 'pending')::int AS queued`;

/**
 * Plants on PostgreSQL. Every race between instances is settled by one statement's atomicity (INSERT
 * ... ON CONFLICT, UPDATE ... RETURNING), and each write's webhook messages are inserted by the same
 * statement (a data-modifying CTE) or, for a patch, the same transaction.
 */
export class PostgresPlants implements PlantStore {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
    /** Told how many messages a committed write queued. */
    private readonly queued: (count: number) => void,
  ) {}

  async get(id: PlantId): Promise<Plant | undefined> {
    const { rows } = await this.query<PlantRow>(`${PLANT_COLUMNS} WHERE id = $1::bigint`, [int8(id)]);
    return rows[0] && toPlant(rows[0]);
  }

  async list({ limit, after, tag }: ListOptions): Promise<Plant[]> {
    // Four plain statements rather than one with "$n IS NULL OR ...", so each uses its index directly.
    const { rows } =
      tag === undefined
        ? after === undefined
          ? await this.query<PlantRow>(`${PLANT_COLUMNS} ORDER BY plants.id LIMIT $1`, [limit])
          : await this.query<PlantRow>(`${PLANT_COLUMNS} WHERE id > $1::bigint ORDER BY plants.id LIMIT $2`, [int8(after), limit])
        : after === undefined
          ? await this.query<PlantRow>(`${PLANT_COLUMNS} WHERE tag = $1 ORDER BY plants.id LIMIT $2`, [tag, limit])
          : await this.query<PlantRow>(`${PLANT_COLUMNS} WHERE tag = $1 AND id > $2::bigint ORDER BY plants.id LIMIT $3`, [tag, int8(after), limit]);
    return rows.map(toPlant);
  }

  async put(plant: Plant, options: { createOnly?: boolean } = {}): Promise<PutOutcome> {
    const at = Date.now();
    const values = [int8(plant.id), plant.name, plant.tag ?? null, newEventId(), at, bodyFor('plant.created', plant, at)];
    if (options.createOnly) {
      const { rows } = await this.query<{ created: number; queued: number }>(
        `WITH w AS (INSERT INTO plants (id, name, tag) VALUES ($1::bigint, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING 1),
              q AS (${insertMessages({ type: "'plant.created'", payload: '$6', eventId: '$4', at: '$5::bigint', from: 'w' })})
         SELECT (SELECT count(*) FROM w)::int AS created, ${QUEUED}`,
        values,
      );
      this.queued(rows[0]!.queued);
      return rows[0]!.created === 1 ? 'created' : 'exists';
    }
    // One statement, so a concurrent writer's plant is replaced whole or not at all. xmax is 0 on a
    // row version this statement inserted, and the locking transaction's id on one it updated.
    const type = `CASE WHEN w.inserted THEN 'plant.created' ELSE 'plant.updated' END`;
    const { rows } = await this.query<{ inserted: boolean; queued: number }>(
      `WITH w AS (INSERT INTO plants (id, name, tag) VALUES ($1::bigint, $2, $3)
                  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag
                  RETURNING (xmax = 0) AS inserted),
            q AS (${insertMessages({ type, payload: 'CASE WHEN w.inserted THEN $6 ELSE $7 END', eventId: '$4', at: '$5::bigint', from: 'w' })})
       SELECT w.inserted, ${QUEUED} FROM w`,
      [...values, bodyFor('plant.updated', plant, at)],
    );
    this.queued(rows[0]!.queued);
    return rows[0]!.inserted ? 'created' : 'replaced';
  }

  async patch(id: PlantId, changes: PlantChanges): Promise<Plant | undefined> {
    const { plant, queued } = await this.transaction(async (query) => {
      // One UPDATE reads and writes the row under its lock: concurrent patches never lose a field.
      const { rows } = await query<PlantRow>(
        `UPDATE plants SET name = COALESCE($2::text, name), tag = CASE WHEN $3::boolean THEN $4::text ELSE tag END
         WHERE id = $1::bigint RETURNING id::text AS id, name, tag`,
        [int8(id), changes.name ?? null, changes.tag !== undefined, changes.tag ?? null],
      );
      if (!rows[0]) return { plant: undefined, queued: 0 };
      const patched = toPlant(rows[0]);
      const at = Date.now();
      const messages = await query<{ status: string }>(
        insertMessages({ type: "'plant.updated'", payload: '$3', eventId: '$1', at: '$2::bigint', from: '(SELECT 1) AS w' }),
        [newEventId(), at, bodyFor('plant.updated', patched, at)],
      );
      return { plant: patched, queued: messages.rows.filter((m) => m.status === 'pending').length };
    });
    this.queued(queued);
    return plant;
  }

  async delete(id: PlantId): Promise<boolean> {
    const at = Date.now();
    const { rows } = await this.query<{ deleted: number; queued: number }>(
      `WITH w AS (DELETE FROM plants WHERE id = $1::bigint RETURNING 1),
            q AS (${insertMessages({ type: "'plant.deleted'", payload: '$4', eventId: '$2', at: '$3::bigint', from: 'w' })})
       SELECT (SELECT count(*) FROM w)::int AS deleted, ${QUEUED}`,
      [int8(id), newEventId(), at, bodyFor('plant.deleted', { id }, at)],
    );
    this.queued(rows[0]!.queued);
    return rows[0]!.deleted === 1;
  }
}
