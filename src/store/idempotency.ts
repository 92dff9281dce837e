import type { PlantId } from '../model/plant-id.js';
import type { StoredPlant } from '../model/plant.js';
import type { NewEndpointRecord } from './webhook-store.js';

/**
 * Answers kept for Idempotency-Keys. A POST sent with a key is written together with its answer, in the
 * write's own transaction, so that a crash can never keep the one without the other: a retry with the
 * same key then gets the answer again instead of the write being made twice. The answer depends on what
 * the write found (created or replaced, the new version…), which is known only inside the transaction,
 * and SQLite's transactions run on the writer thread: so the caller gives, with the write, the answer
 * for each outcome the write can have, as data (a recipe), and the store fills in the values the write
 * made (`slot`). Keys belong to an owner (a token's id, a JWT's subject) and expire after a time to live.
 */

/** An HTTP answer as kept: its status, the headers that matter (lower-case names), its body. */
export interface StoredAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/** An answer kept under a key, with the fingerprint of the request that made it. */
export interface KeptAnswer extends StoredAnswer {
  fingerprint: string;
  /** Kept by an earlier request with the key (found, not made by this call): this call's write was not made. */
  earlier: boolean;
}

/**
 * A put's result and options as PlantStore.put has them (store.ts, which imports this module: said here
 * again, by their shape, rather than imported back).
 */
type PutResult = { outcome: 'created' | 'replaced'; version: number } | { outcome: 'exists' | 'precondition-failed' };
interface PutOptions {
  createOnly?: boolean | undefined;
  ifMatch?: '*' | readonly number[] | undefined;
}

/** The outcomes each keyed write can have, by which its answer is chosen. */
export interface Outcomes {
  put: PutResult['outcome'];
  import: 'imported' | 'conflict';
  createEndpoint: 'created';
  rotateSecret: 'rotated' | 'not-found';
  replay: 'requeued' | 'not-found';
}

/** What a write did, for its answer: the outcome's name and the values the answer's slots take. */
export interface Outcome {
  name: string;
  values?: Readonly<Record<string, string | number>>;
}

/**
 * The answer to keep with a write, by the outcome it will have. Texts may hold slots (`slot('version')`).
 * An outcome the write cannot have may be left out (a put without a condition is never refused); one it
 * has without an answer is a bug, which fails the write.
 */
export type AnswerRecipe<W extends keyof Outcomes> = { readonly [O in Outcomes[W]]?: StoredAnswer };

/** A write's claim on a key: whose, which, for what request, and for how long its answer is kept. */
export interface KeyClaim {
  /** The token's id or the JWT's subject (Principal.tokenId): keys of different owners never meet. */
  owner: string;
  key: string;
  /** Of the request (method, path, body…): a later request with the key must have the same one. */
  fingerprint: string;
  /** IDEMPOTENCY_KEY_TTL: the answer is kept this long after the commit, by the database's clock. */
  ttlMs: number;
}

export interface KeepAnswer<W extends keyof Outcomes> extends KeyClaim {
  answers: AnswerRecipe<W>;
}

/** A KeepAnswer of any write, as a store passes it on. */
export interface AnyKeepAnswer extends KeyClaim {
  answers: { readonly [outcome: string]: StoredAnswer | undefined };
}

/**
 * Where a value of the write goes in a kept answer's text. U+0000 marks it: JSON text and header values
 * never hold that character raw, so a slot cannot be mistaken for anything a client sent.
 */
export function slot(name: string): string {
  return `\u0000${name}\u0000`;
}

/** The answer for what the write did, its slots filled. A missing answer or value is a bug of the caller: it throws. */
export function renderAnswer(recipe: { readonly [outcome: string]: StoredAnswer | undefined }, outcome: Outcome): StoredAnswer {
  const template = recipe[outcome.name];
  if (template === undefined) throw new Error(`no answer was given for the outcome "${outcome.name}"`);
  // Split at the marks, a slot's name is every other part.
  const fill = (text: string) =>
    text
      .split('\u0000')
      .map((part, i) => {
        if (i % 2 === 0) return part;
        const value = outcome.values?.[part];
        if (value === undefined) throw new Error(`the outcome "${outcome.name}" has no value "${part}"`);
        return String(value);
      })
      .join('');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(template.headers)) headers[name] = fill(value);
  return { status: template.status, headers, body: fill(template.body) };
}

/** The outcome of each keyed write, from its result (the same for every store). */
export const outcomeOf = {
  put: (result: PutResult): Outcome =>
    result.outcome === 'created' || result.outcome === 'replaced'
      ? { name: result.outcome, values: { version: result.version } }
      : { name: result.outcome },
  import: (result: { created: number; replaced: number } | { conflict: PlantId }): Outcome =>
    'conflict' in result ? { name: 'conflict', values: { id: String(result.conflict) } } : { name: 'imported', values: { ...result } },
  createEndpoint: (): Outcome => ({ name: 'created' }),
  rotateSecret: (found: boolean): Outcome => ({ name: found ? 'rotated' : 'not-found' }),
  replay: (requeued: number | null | undefined): Outcome =>
    requeued === null || requeued === undefined ? { name: 'not-found' } : { name: 'requeued', values: { requeued } },
};

/**
 * The kept answers, and the POST writes that can keep one: each the same write as without a key, made
 * only if no unexpired answer is kept under the key already; then that answer (`earlier`) comes back
 * instead, and nothing is written. That check is the write's own, in its transaction: two requests with
 * one key, even from two processes, never both make the write.
 */
export interface IdempotencyStore {
  /** The unexpired answer kept under this owner's key. */
  find(owner: string, key: string): Promise<KeptAnswer | undefined>;
  put(plant: StoredPlant, options: PutOptions, keep: KeepAnswer<'put'>): Promise<KeptAnswer>;
  createEndpoint(endpoint: NewEndpointRecord, keep: KeepAnswer<'createEndpoint'>): Promise<KeptAnswer>;
  rotateSecret(id: string, secret: string, previousUntil: number, keep: KeepAnswer<'rotateSecret'>): Promise<KeptAnswer>;
  replay(endpointId: string, since: number, until: number | undefined, keep: KeepAnswer<'replay'>): Promise<KeptAnswer>;
  /** Deletes the answers whose time to live has passed; answers how many. */
  deleteExpired(): Promise<number>;
  /** How many unexpired answers are kept (metrics). */
  count(): Promise<number>;
}

/** A kept answer's headers as the database keeps them (JSON text), back as an object. */
export function parseHeaders(text: string): Record<string, string> {
  return JSON.parse(text) as Record<string, string>;
}
