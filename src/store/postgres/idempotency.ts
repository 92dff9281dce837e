import {
  outcomeOf,
  replayOf,
  type AnyOutcome,
  type EarlierAnswer,
  type IdempotencyStore,
  type KeyClaim,
  type KeyedKind,
  type KeyedOutcome,
  type KeyedWrite,
  type KeyRow,
  type Outcomes,
} from '../idempotency.js';
import type { PostgresWriteBatcher } from './group-commit.js';
import { commitImportUnder } from './imports.js';
import { FIND, NOW_ONCE, underKey } from './keys.js';
import { putWrite } from './plant-writes.js';
import type { Query, Transaction } from './query.js';
import { PostgresTokens } from './tokens.js';
import { PostgresWebhooks } from './webhooks.js';
import { DuplicateTokenNameError } from '../token-store.js';

/**
 * Idempotency-Keys on PostgreSQL, shared by every instance: each keyed write made by the same code as
 * without a key, under its key's claim, in its transaction (postgres/keys.ts says how a claim settles
 * races between instances): puts in the group commit's batches, the webhook writes in a transaction of
 * their own, an import in its own (postgres/imports.ts).
 */

// The longest expired first, found on the expiry index; rows locked by a claim taking an expired key over
// are left for the next sweep (SKIP LOCKED), so the sweep never waits for a write, nor a write long for it.
const SWEEP = `DELETE FROM idempotency_keys WHERE (owner, key) IN
    (SELECT owner, key FROM idempotency_keys WHERE expires_at <= ${NOW_ONCE} ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
  AND expires_at <= ${NOW_ONCE}`;

// On the expiry index (an index-only scan once vacuumed).
const COUNT = `SELECT count(*)::text AS n FROM idempotency_keys WHERE expires_at > ${NOW_ONCE}`;

export class PostgresIdempotency implements IdempotencyStore {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
    /** Puts go through the group commit, their claims and outcomes in the batch's transaction. */
    private readonly writes: PostgresWriteBatcher,
  ) {}

  write<W extends KeyedWrite>(claim: KeyClaim, write: W): Promise<KeyedOutcome<W['kind']> | EarlierAnswer> {
    // Each answers the outcome of the write's kind, or the one an earlier request kept.
    return this.made(claim, write);
  }

  private made(claim: KeyClaim, write: KeyedWrite): Promise<AnyOutcome> {
    switch (write.kind) {
      case 'put':
        return this.writes.write(putWrite(write.plant, write.options, claim)) as Promise<AnyOutcome>;
      case 'import':
        return commitImportUnder(write.session, claim, write.createOnly);
      case 'createEndpoint':
        return this.webhookWrite(claim, 'createEndpoint', async (webhooks) => {
          await webhooks.createEndpoint(write.endpoint);
          return outcomeOf.createEndpoint(write.endpoint);
        });
      case 'rotateSecret':
        return this.webhookWrite(claim, 'rotateSecret', async (webhooks) =>
          outcomeOf.rotateSecret(write.secret, await webhooks.rotateSecret(write.id, write.secret, write.previousUntil)),
        );
      case 'replay':
        return this.webhookWrite(claim, 'replay', async (webhooks) =>
          outcomeOf.replay(await webhooks.replay(write.endpointId, write.since, write.until)),
        );
      case 'createToken':
        return this.transaction((query) =>
          underKey(query, claim, 'createToken', async () => {
            const token = await new PostgresTokens(query).create(write.token).catch((error: unknown) => {
              if (error instanceof DuplicateTokenNameError) return undefined;
              throw error;
            });
            return outcomeOf.createToken(token, write.secret);
          }),
        );
    }
  }

  /** A webhook write, as without a key (the same statements, on the transaction's connection), under the key's claim. */
  private webhookWrite<K extends KeyedKind>(claim: KeyClaim, kind: K, write: (webhooks: PostgresWebhooks) => Promise<Outcomes[K]>) {
    return this.transaction((query) => underKey(query, claim, kind, () => write(new PostgresWebhooks(query))));
  }

  async find(owner: string, key: string): Promise<AnyOutcome | undefined> {
    const { rows } = await this.query<KeyRow>(FIND, [[owner], [key]]);
    return rows[0] && replayOf(rows[0]);
  }

  async deleteExpired(limit: number): Promise<number> {
    const { rowCount } = await this.query(SWEEP, [limit]);
    return rowCount ?? 0;
  }

  async count(): Promise<number> {
    const { rows } = await this.query<{ n: string }>(COUNT, []);
    return Number(rows[0]!.n);
  }
}
