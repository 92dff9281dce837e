import type { StoredPlant } from '../model/plant.js';
import type { KeyClaim, Kept } from './idempotency.js';
import type { IfMatch, IfNoneMatch, ImportOutcome, PlantImport, PutResult } from './plant-store.js';
import type { NewToken, TokenRecord } from './token-store.js';
import type { NewEndpointRecord, WebhookEndpoint } from './webhook-store.js';

/**
 * The writes a request makes, as values: a kind and its input, applied by the one entry, `apply`, with a
 * claim on an Idempotency-Key or without one (store/idempotency.ts), by the same code either way. Each
 * answers its **outcome**: what it did, as data (JSON, the same for every store), which its route renders
 * the same way the first time and on every replay. A new write is a kind here (its input and outcome), a
 * case in each store's apply, and its route's render function.
 */
export interface Inputs {
  /** PlantStore.put's: the plant, If-None-Match (`*`: createOnly; tags: ifNoneMatch) and If-Match (the input is its PutOptions). */
  put: { plant: StoredPlant; createOnly: boolean; ifMatch: IfMatch | undefined; ifNoneMatch?: IfNoneMatch | undefined };
  /** The commit of an import this store started (PlantStore.startImport), its rows staged. */
  import: { session: PlantImport; createOnly: boolean };
  createEndpoint: { endpoint: NewEndpointRecord };
  /** `expected`: the endpoint as the client read it (If-Match), judged in the write; undefined: whatever it is. */
  rotateSecret: { id: string; secret: string; previousUntil: number; expected?: WebhookEndpoint | undefined };
  replay: { endpointId: string; since: number; until: number | undefined; expected?: WebhookEndpoint | undefined };
  /** A stored token; its secret is kept in the outcome (the answer shows it), never in the tokens table. */
  createToken: { token: NewToken; secret: string };
}

export type WriteKind = keyof Inputs;

/** One write: its kind and its input. */
export interface Write<K extends WriteKind = WriteKind> {
  kind: K;
  input: Inputs[K];
}

/** Any write, told apart by its kind (what a store's apply switches on). */
export type AnyWrite = { [K in WriteKind]: Write<K> }[WriteKind];

/** What each write did: everything its answer is made from, the first time and on every replay. */
export interface Outcomes {
  put: PutResult;
  /** The counts, or (create-only) the first id that existed already: nothing was imported. */
  import: ImportOutcome;
  /** The endpoint made, with its secret. */
  createEndpoint: NewEndpointRecord;
  /** 'changed': the endpoint is not as `expected` (If-Match); nothing done. */
  rotateSecret: { secret: string } | 'not-found' | 'changed';
  replay: { requeued: number } | 'not-found' | 'changed';
  /** The token made, with its secret; or the refusal of a name an active token has. */
  createToken: { token: TokenRecord; secret: string } | 'name-taken';
}

/** A write's outcome under a claim: its own, or the one kept under the key already (or an earlier release's answer there). */
export type KeptOutcome<K extends WriteKind = WriteKind> = Kept<K, Outcomes[K]>;

/** The outcome of each write from what the store's statements answered (the same for every store). */
export const outcomeOf = {
  rotateSecret: (secret: string, rotated: boolean | 'changed'): Outcomes['rotateSecret'] =>
    rotated === 'changed' ? rotated : rotated ? { secret } : 'not-found',
  replay: (requeued: number | null | undefined | 'changed'): Outcomes['replay'] =>
    requeued === 'changed' ? requeued : requeued === null || requeued === undefined ? 'not-found' : { requeued },
  createToken: (token: TokenRecord | undefined, secret: string): Outcomes['createToken'] => (token === undefined ? 'name-taken' : { token, secret }),
};

/**
 * The one way a write is made (Store.writes). Without a claim, the write is made and its outcome
 * answered. With one, the write is made as without, and its outcome kept under the claim's key in the
 * write's transaction: unless the key has an unexpired outcome already, which comes back instead
 * (`replayed`), and nothing is written.
 */
export interface WriteStore {
  apply<K extends WriteKind>(write: Write<K>): Promise<Outcomes[K]>;
  apply<K extends WriteKind>(write: Write<K>, claim: KeyClaim): Promise<KeptOutcome<K>>;
}
