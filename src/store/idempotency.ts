import type { PlantId } from '../model/plant-id.js';
import type { StoredPlant } from '../model/plant.js';
import type { ImportResult, PlantImport, PutOptions, PutResult } from './plant-store.js';
import type { NewToken, TokenRecord } from './token-store.js';
import type { NewEndpointRecord } from './webhook-store.js';

/**
 * Idempotency-Keys as the store keeps them, in four words. A POST sent with a **key** makes its write
 * under a **claim** on the key (whose key, which request, for how long), and the write's transaction keeps,
 * under the key, the request's fingerprint and the write's **outcome**: what it did, as data (created or
 * replaced and the version, the endpoint made with its secret, the import's counts, the refusal it
 * decided), never an HTTP answer; each route renders its answer from the outcome (http/idempotency.ts).
 * A later write under a key that has an unexpired outcome is not made: that outcome comes back instead,
 * a **replay**. The check is the write's own, in its transaction, so two requests with one key, even from
 * two processes, never both make the write: a crash keeps the write and its outcome, or neither.
 */

/** A write's claim on a key: whose, which, for what request, and for how long its outcome is kept. */
export interface KeyClaim {
  /** The token's id or the JWT's subject (Principal.tokenId): keys of different owners never meet. */
  owner: string;
  key: string;
  /** Of the request (method, path, body…): a later request with the key must have the same one. */
  fingerprint: string;
  /** IDEMPOTENCY_KEY_TTL: the outcome is kept this long after the commit, by the database's clock. */
  ttlMs: number;
}

/**
 * The writes that can be made under a key, each as data: the same write the store makes without a key
 * (PlantStore.put, the import's commit, the WebhookStore's), by the same code.
 */
export type KeyedWrite =
  | { kind: 'put'; plant: StoredPlant; options: PutOptions }
  /** The commit of an import this store started (PlantStore.startImport), its rows staged. */
  | { kind: 'import'; session: PlantImport; createOnly: boolean }
  | { kind: 'createEndpoint'; endpoint: NewEndpointRecord }
  | { kind: 'rotateSecret'; id: string; secret: string; previousUntil: number }
  | { kind: 'replay'; endpointId: string; since: number; until: number | undefined }
  /** A stored token; its secret is kept in the outcome (the answer shows it), never in the tokens table. */
  | { kind: 'createToken'; token: NewToken; secret: string };

export type KeyedKind = KeyedWrite['kind'];

/**
 * What each write did, as kept under its key (JSON): everything its answer is made from, the first time
 * and on every replay. Ids are decimal text (JSON holds no int64).
 */
export interface Outcomes {
  put: PutResult;
  /** The counts, or (create-only) the first id that existed already: nothing was imported. */
  import: ImportResult | { conflict: string };
  /** The endpoint made, with its secret. */
  createEndpoint: NewEndpointRecord;
  rotateSecret: { secret: string } | 'not-found';
  replay: { requeued: number } | 'not-found';
  /** The token made, with its secret; or the refusal of a name an active token has. */
  createToken: { token: TokenRecord; secret: string } | 'name-taken';
}

/** A write's outcome under its key, or the earlier one found there instead (`replayed`: this write was not made). */
export interface KeyedOutcome<K extends KeyedKind> {
  kind: K;
  outcome: Outcomes[K];
  fingerprint: string;
  replayed: boolean;
}

/**
 * An outcome kept by a release before outcomes were: the HTTP answer it kept, moved under this kind by
 * the migration `idempotency_outcomes` as it was (`{status, headers, body}`, which the store does not
 * read), and replayed as kept until it expires (http/idempotency.ts). None is made any more.
 */
export interface EarlierAnswer {
  kind: typeof EARLIER_ANSWER;
  outcome: unknown;
  fingerprint: string;
  replayed: true;
}

export const EARLIER_ANSWER = 'answer';

/** What a key holds: an outcome, or an earlier release's answer. */
export type AnyOutcome = KeyedOutcome<KeyedKind> | EarlierAnswer;

/** The outcome of each write from the store's result and the write (the same for every store). */
export const outcomeOf = {
  put: (result: PutResult): Outcomes['put'] => result,
  import: (result: ImportResult | { conflict: PlantId }): Outcomes['import'] =>
    'conflict' in result ? { conflict: String(result.conflict) } : { created: result.created, replaced: result.replaced },
  createEndpoint: (endpoint: NewEndpointRecord): Outcomes['createEndpoint'] => endpoint,
  rotateSecret: (secret: string, rotated: boolean): Outcomes['rotateSecret'] => (rotated ? { secret } : 'not-found'),
  replay: (requeued: number | null | undefined): Outcomes['replay'] => (requeued === null || requeued === undefined ? 'not-found' : { requeued }),
  createToken: (token: TokenRecord | undefined, secret: string): Outcomes['createToken'] => (token === undefined ? 'name-taken' : { token, secret }),
};

/** An outcome as the idempotency_keys table holds it (its columns: KEY_COLUMNS). */
export interface KeyRow {
  fingerprint: string;
  kind: string;
  outcome: string;
}

export const KEY_COLUMNS = 'fingerprint, kind, outcome';

/** A row found under a key: the outcome an earlier request kept there. */
export function replayOf(row: KeyRow): AnyOutcome {
  return { kind: row.kind as KeyedKind, outcome: JSON.parse(row.outcome) as Outcomes[KeyedKind], fingerprint: row.fingerprint, replayed: true };
}

/** The outcome as the table keeps it. */
export function outcomeText(outcome: Outcomes[KeyedKind]): string {
  return JSON.stringify(outcome);
}

/** The outcome a write made now, under its claim. */
export function madeUnder<K extends KeyedKind>(claim: KeyClaim, kind: K, outcome: Outcomes[K]): KeyedOutcome<K> {
  return { kind, outcome, fingerprint: claim.fingerprint, replayed: false };
}

/**
 * The outcomes kept under keys, and the one way to make a write under a key. `write` makes the write,
 * as without a key, and keeps its outcome under the claim's key, in the write's transaction: unless the
 * key has an unexpired outcome already, which comes back instead (`replayed`), and nothing is written.
 */
export interface IdempotencyStore {
  write<W extends KeyedWrite>(claim: KeyClaim, write: W): Promise<KeyedOutcome<W['kind']> | EarlierAnswer>;
  /** The unexpired outcome kept under this owner's key. */
  find(owner: string, key: string): Promise<AnyOutcome | undefined>;
  /**
   * Deletes at most `limit` outcomes whose time to live has passed, the longest expired first; answers how
   * many. Bounded, so that writes never wait long behind it (sweepExpired deletes them all, a batch at a time).
   */
  deleteExpired(limit: number): Promise<number>;
  /** How many unexpired outcomes are kept (the gauge plant_store_idempotency_keys): cheap however many there are. */
  count(): Promise<number>;
}

/**
 * Outcomes deleted by one statement of a sweep at most: about 2 ms of SQLite's writer thread (measured
 * with a million rows), so a write queued behind a batch waits that long at most.
 */
export const SWEEP_BATCH = 500;

/**
 * Deletes every expired outcome, `batch` at a time, each batch its own transaction, and between batches
 * lets the writes queued meanwhile go first (setImmediate: the batchers send what waits before the next
 * batch is asked for). Answers how many were deleted, in how many batches. Once `signal` is aborted (the
 * process stops, its store about to close) no further batch is asked for.
 */
export async function sweepExpired(
  keys: Pick<IdempotencyStore, 'deleteExpired'>,
  batch = SWEEP_BATCH,
  signal?: AbortSignal,
): Promise<{ deleted: number; batches: number }> {
  let deleted = 0;
  for (let batches = 1; ; batches++) {
    const n = await keys.deleteExpired(batch);
    deleted += n;
    if (n < batch || signal?.aborted) return { deleted, batches };
    await new Promise((resolve) => setImmediate(resolve));
    if (signal?.aborted) return { deleted, batches };
  }
}
