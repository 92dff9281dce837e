import type { StoredPlant } from '../../model/plant.js';
import { parseHeaders, type IdempotencyStore, type KeepAnswer, type KeptAnswer } from '../idempotency.js';
import type { PutOptions } from '../store.js';
import type { NewEndpointRecord } from '../webhook-store.js';
import { prepare, type Connection } from './connection.js';
import { guard } from './errors.js';
import type { WriteThread } from './writer/thread.js';

/**
 * Answers kept for Idempotency-Keys on SQLite: found on the main thread's connection; every keyed write,
 * with its look for an earlier answer, made by the writer thread in its batch (writer/idempotency.ts).
 */
export class SqliteIdempotency implements IdempotencyStore {
  private readonly found;
  private readonly live;

  constructor(
    db: Connection,
    private readonly writer: WriteThread,
  ) {
    this.found = prepare<[string, string, number], { fingerprint: string; status: number; headers: string; body: string }>(
      db,
      'SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE owner = ? AND key = ? AND expires_at > ?',
    );
    this.live = prepare<[number], number>(db, 'SELECT count(*) FROM idempotency_keys WHERE expires_at > ?').pluck();
  }

  find(owner: string, key: string): Promise<KeptAnswer | undefined> {
    return guard(() => {
      const row = this.found.get(owner, key, Date.now());
      return row && { fingerprint: row.fingerprint, status: row.status, headers: parseHeaders(row.headers), body: row.body, earlier: true };
    });
  }

  put(plant: StoredPlant, options: PutOptions, keep: KeepAnswer<'put'>): Promise<KeptAnswer> {
    const op = {
      kind: 'put' as const,
      id: plant.id,
      name: plant.name,
      tag: plant.tag ?? null,
      createOnly: options.createOnly === true,
      ifMatch: options.ifMatch,
    };
    return this.writer.write({ kind: 'keyed', op, keep });
  }

  createEndpoint(endpoint: NewEndpointRecord, keep: KeepAnswer<'createEndpoint'>): Promise<KeptAnswer> {
    return this.writer.write({ kind: 'keyed', op: { kind: 'createEndpoint', endpoint }, keep });
  }

  rotateSecret(id: string, secret: string, previousUntil: number, keep: KeepAnswer<'rotateSecret'>): Promise<KeptAnswer> {
    return this.writer.write({ kind: 'keyed', op: { kind: 'rotateSecret', id, secret, previousUntil }, keep });
  }

  replay(endpointId: string, since: number, until: number | undefined, keep: KeepAnswer<'replay'>): Promise<KeptAnswer> {
    return this.writer.write({ kind: 'keyed', op: { kind: 'replay', endpointId, since, until, now: Date.now() }, keep });
  }

  deleteExpired(): Promise<number> {
    return this.writer.write({ kind: 'deleteExpiredKeys' });
  }

  count(): Promise<number> {
    return guard(() => this.live.get(Date.now())!);
  }
}
