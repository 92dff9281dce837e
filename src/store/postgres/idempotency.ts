import type { StoredPlant } from '../../model/plant.js';
import { outcomeOf, type AnyKeepAnswer, type IdempotencyStore, type KeepAnswer, type KeptAnswer, type Outcome } from '../idempotency.js';
import { claimKey, FIND, keepAnswer, kept, NOW_MS, type KeptRow } from './kept-answers.js';
import type { PutOptions } from '../store.js';
import type { NewEndpointRecord } from '../webhook-store.js';
import type { PostgresWriteBatcher } from './group-commit.js';
import type { Query, Transaction } from './query.js';
import { PostgresWebhooks } from './webhooks.js';

/**
 * Answers kept for Idempotency-Keys on PostgreSQL, shared by every instance. A keyed write claims its key
 * first, in its own transaction: it inserts the key's row (or takes over an expired one). A claim of the
 * same key by another transaction, on any instance, waits on the primary key until that one commits, and
 * then finds its answer: the write is not made, and the earlier answer comes back. The write follows, then
 * its answer goes into the row; all of it commits together, or none of it (store/idempotency.ts).
 */

export class PostgresIdempotency implements IdempotencyStore {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
    /** Plant writes go through the group commit, their claim and answer in the batch's transaction. */
    private readonly writes: PostgresWriteBatcher,
  ) {}

  async find(owner: string, key: string): Promise<KeptAnswer | undefined> {
    const { rows } = await this.query<KeptRow>(FIND, [owner, key]);
    return rows[0] && kept(rows[0]);
  }

  put(plant: StoredPlant, options: PutOptions, keep: KeepAnswer<'put'>): Promise<KeptAnswer> {
    return this.writes.write({ kind: 'put', plant, createOnly: options.createOnly === true, ifMatch: options.ifMatch, keep }) as Promise<KeptAnswer>;
  }

  /** A webhook write, as without a key (the same statements, on the transaction's connection), under the key's claim. */
  private webhookWrite<T>(keep: AnyKeepAnswer, write: (webhooks: PostgresWebhooks) => Promise<T>, outcome: (result: T) => Outcome) {
    return this.transaction(async (query) => {
      const earlier = await claimKey(query, keep);
      if (earlier) return earlier;
      const result = await write(new PostgresWebhooks(query));
      return keepAnswer(query, keep, outcome(result));
    });
  }

  createEndpoint(endpoint: NewEndpointRecord, keep: KeepAnswer<'createEndpoint'>): Promise<KeptAnswer> {
    return this.webhookWrite(keep, (webhooks) => webhooks.createEndpoint(endpoint), outcomeOf.createEndpoint);
  }

  rotateSecret(id: string, secret: string, previousUntil: number, keep: KeepAnswer<'rotateSecret'>): Promise<KeptAnswer> {
    return this.webhookWrite(keep, (webhooks) => webhooks.rotateSecret(id, secret, previousUntil), outcomeOf.rotateSecret);
  }

  replay(endpointId: string, since: number, until: number | undefined, keep: KeepAnswer<'replay'>): Promise<KeptAnswer> {
    return this.webhookWrite(keep, (webhooks) => webhooks.replay(endpointId, since, until), outcomeOf.replay);
  }

  async deleteExpired(): Promise<number> {
    const { rowCount } = await this.query(`DELETE FROM idempotency_keys WHERE expires_at <= ${NOW_MS}`, []);
    return rowCount ?? 0;
  }

  async count(): Promise<number> {
    const { rows } = await this.query<{ n: string }>(`SELECT count(*)::text AS n FROM idempotency_keys WHERE expires_at > ${NOW_MS}`, []);
    return Number(rows[0]!.n);
  }
}
