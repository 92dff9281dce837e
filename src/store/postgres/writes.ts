import type { KeyClaim } from '../idempotency.js';
import { DuplicateTokenNameError } from '../token-store.js';
import { outcomeOf, type AnyWrite, type KeptOutcome, type Outcomes, type Write, type WriteKind, type WriteStore } from '../writes.js';
import type { PostgresWriteBatcher } from './group-commit.js';
import { underKey } from './keys.js';
import { putWrite } from './plant-writes.js';
import type { Query, Transaction } from './query.js';
import { PostgresTokens } from './tokens.js';
import { PostgresWebhooks } from './webhooks.js';

/**
 * The writes a request makes (store/writes.ts) on PostgreSQL, each by the same code with a claim on an
 * Idempotency-Key or without (postgres/keys.ts says how a claim settles races between instances): puts
 * in the group commit's batches (keyed ones in the batch's transaction: keyed-puts.ts), an import on its
 * own connection (imports.ts), the others as one statement, or under a claim in a transaction of their
 * own with it.
 */
export class PostgresWrites implements WriteStore {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
    /** Puts go through the group commit, their claims and outcomes in the batch's transaction. */
    private readonly batcher: PostgresWriteBatcher,
  ) {}

  apply<K extends WriteKind>(write: Write<K>): Promise<Outcomes[K]>;
  apply<K extends WriteKind>(write: Write<K>, claim: KeyClaim): Promise<KeptOutcome<K>>;
  apply(write: AnyWrite, claim?: KeyClaim): Promise<unknown> {
    // The one place the kinds are told apart.
    switch (write.kind) {
      case 'put':
        return this.batcher.write(putWrite(write.input.plant, write.input, claim));
      case 'import':
        return write.input.session.settle(write.input.createOnly, claim);
      case 'createEndpoint': {
        const { endpoint } = write.input;
        return this.made(claim, write.kind, async (query) => {
          await new PostgresWebhooks(query).createEndpoint(endpoint);
          return endpoint;
        });
      }
      case 'rotateSecret': {
        const { id, secret, previousUntil, expected } = write.input;
        return this.made(claim, write.kind, async (query) =>
          outcomeOf.rotateSecret(secret, await new PostgresWebhooks(query).rotateSecret(id, secret, previousUntil, expected)),
        );
      }
      case 'replay': {
        const { endpointId, since, until, expected } = write.input;
        return this.made(claim, write.kind, async (query) =>
          outcomeOf.replay(await new PostgresWebhooks(query).replay(endpointId, since, until, expected)),
        );
      }
      case 'createToken': {
        const { token, secret } = write.input;
        return this.made(claim, write.kind, async (query) => {
          // A name an active token has inserts nothing (postgres/tokens.ts): the refusal is the outcome.
          const made = await new PostgresTokens(query).create(token).catch((error: unknown) => {
            if (error instanceof DuplicateTokenNameError) return undefined;
            throw error;
          });
          return outcomeOf.createToken(made, secret);
        });
      }
    }
  }

  /** A write by its statements on a connection of the pool; under a claim, in a transaction with the claim (keys.ts). */
  private made<K extends WriteKind>(claim: KeyClaim | undefined, kind: K, write: (query: Query) => Promise<Outcomes[K]>): Promise<unknown> {
    if (claim === undefined) return write(this.query);
    return this.transaction((query) => underKey(query, claim, kind, () => write(query)));
  }
}
