/**
 * Idempotency-Keys as the store keeps them, in four words. A POST sent with a **key** makes its write
 * (store/writes.ts) under a **claim** on the key (whose key, which request, for how long), and the write's
 * transaction keeps, under the key, the request's fingerprint and the write's **outcome**: what it did, as
 * data (created or replaced and the version, the endpoint made with its secret, the import's counts, the
 * refusal it decided), never an HTTP answer; each route renders its answer from the outcome. A later
 * write under a key that has an unexpired outcome is not made: that outcome comes back instead, a
 * **replay**. The check is the write's own, in its transaction, so two requests with one key, even from
 * two processes, never both make the write: a crash keeps the write and its outcome, or neither. Outcomes
 * expire after IDEMPOTENCY_KEY_TTL and are swept in the background (idempotency-sweep.ts).
 *
 * This module imports nothing of the store's (the plant store's import names its claims: plant-store.ts).
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
 * A write's outcome under its key (`kind`: the write's, store/writes.ts), or the earlier one found there
 * instead (`replayed`: this write was not made). Ids are decimal text (JSON holds no int64).
 */
export interface KeyedOutcome<K extends string = string, O = unknown> {
  kind: K;
  outcome: O;
  fingerprint: string;
  replayed: boolean;
}

export const EARLIER_ANSWER = 'answer';

/**
 * An outcome kept by a release before outcomes were: the HTTP answer it kept, moved under this kind by
 * the migration `idempotency_outcomes` as it was (`{status, headers, body}`, which the store does not
 * read), and replayed as kept until it expires (http/earlier-answers.ts). None is made any more.
 */
export interface EarlierAnswer {
  kind: typeof EARLIER_ANSWER;
  outcome: unknown;
  fingerprint: string;
  replayed: true;
}

/** What a keyed write answers: its outcome, the earlier one under its key, or an earlier release's answer there. */
export type Kept<K extends string = string, O = unknown> = KeyedOutcome<K, O> | EarlierAnswer;

/** An outcome as the idempotency_keys table holds it (its columns: KEY_COLUMNS). */
export interface KeyRow {
  fingerprint: string;
  kind: string;
  outcome: string;
}

export const KEY_COLUMNS = 'fingerprint, kind, outcome';

/** A row found under a key: the outcome an earlier request kept there (of the same request's kind, or an earlier release's answer). */
export function replayOf(row: KeyRow): Kept {
  return { kind: row.kind, outcome: JSON.parse(row.outcome) as unknown, fingerprint: row.fingerprint, replayed: true };
}

/** The outcome as the table keeps it. */
export function outcomeText(outcome: unknown): string {
  return JSON.stringify(outcome);
}

/**
 * Whether a write's outcome is kept under its key. A rotation or replay that If-Match refused in the write
 * ('changed') did nothing, and keeps nothing, as a 412 found before the write: a retry is judged again (and
 * refused again, the tag being stale). Kept, it could be replayed by the release before during a rolling
 * upgrade, which knows no such outcome (1.0.0 answered it with a 500).
 */
export function keptUnderKey(outcome: unknown): boolean {
  return outcome !== 'changed';
}

/** The outcome a write made now, under its claim. */
export function madeUnder<K extends string, O>(claim: KeyClaim, kind: K, outcome: O): KeyedOutcome<K, O> {
  return { kind, outcome, fingerprint: claim.fingerprint, replayed: false };
}

/**
 * The outcomes kept under keys (the writes that keep them are made by WriteStore.apply, store/writes.ts).
 */
export interface IdempotencyStore {
  /** The unexpired outcome kept under this owner's key. */
  find(owner: string, key: string): Promise<Kept | undefined>;
  /**
   * Deletes at most `limit` outcomes whose time to live has passed, the longest expired first; answers how
   * many. Bounded, so that writes never wait long behind it (idempotency-sweep.ts deletes them all, a batch at a time).
   */
  deleteExpired(limit: number): Promise<number>;
  /** How many unexpired outcomes are kept (the gauge plant_store_idempotency_keys): cheap however many there are. */
  count(): Promise<number>;
}
