import type { PlantId } from '../../../model/plant-id.js';
import type { ClassifiedError } from '../errors.js';
import type { DeleteResult, IfMatch, IfNoneMatch, PatchResult } from '../../store.js';
import type { StoredPlant } from '../../../model/plant.js';
import type { AttemptRecord, DueMessage, EndpointChanges, NewEndpointRecord, WebhookEndpoint } from '../../webhook-store.js';
import type { KeyClaim } from '../../idempotency.js';
import type { KeptOutcome, Outcomes, WriteKind as KeyedKind } from '../../writes.js';

/**
 * The writes the SQLite writer thread commits, as messages: a tagged union, each kind with its own
 * result type (WriteResults). Every write of the store goes this one way (see sqlite/writer/thread.ts).
 * The messages of the writes a request makes (store/writes.ts) answer their outcomes as they are, so that
 * the same message under a key (`keyed`) keeps its result as the outcome without knowing its kind.
 */
export type WriteOp =
  | PlantWriteOp
  | { kind: 'importStage'; importId: number; rows: StagedRows }
  | { kind: 'importCommit'; importId: number; createOnly: boolean }
  | { kind: 'importAbort'; importId: number }
  /** `secret`: for the outcome (the answer shows it; the tokens table never holds it), empty where none is shown. */
  | { kind: 'createToken'; id: string; name: string; hash: Buffer; scopes: string; createdAt: string; secret: string }
  | { kind: 'revokeToken'; idOrName: string; byId: boolean; at: string }
  | { kind: 'createEndpoint'; endpoint: NewEndpointRecord }
  | { kind: 'updateEndpoint'; id: string; changes: EndpointChanges; expected?: WebhookEndpoint | undefined }
  | { kind: 'deleteEndpoint'; id: string; expected?: WebhookEndpoint | undefined }
  | { kind: 'rotateSecret'; id: string; secret: string; previousUntil: number; expected?: WebhookEndpoint | undefined }
  | { kind: 'replay'; endpointId: string; since: number; until: number | undefined; expected?: WebhookEndpoint | undefined; now: number }
  | { kind: 'claimDue'; limit: number; leaseMs: number; now: number }
  | { kind: 'recordAttempts'; attempts: AttemptRecord[]; disableAfterMs: number }
  | { kind: 'releaseClaims'; seqs: readonly string[] }
  | { kind: 'deleteExpired'; before: number }
  | { kind: 'deleteExpiredEvents'; before: number; limit: number }
  | { kind: 'indexSearch' }
  | { kind: 'rebuildSearch' }
  /** A write under a claim on a key: `as` names its kind as kept (store/writes.ts: 'import' for importCommit). */
  | { kind: 'keyed'; as: KeyedKind; claim: KeyClaim; write: KeyedOp }
  | { kind: 'deleteExpiredKeys'; limit: number }
  /** A write that changes nothing, committed: whether the store takes writes again (sqlite/health.ts). */
  | { kind: 'probe' };

/** The messages of the writes a request makes (store/writes.ts), which may go under an Idempotency-Key. */
export type KeyedOp = WriteOf<'put' | 'importCommit' | 'createEndpoint' | 'rotateSecret' | 'replay' | 'createToken'>;

/** The plant writes: with tracing on, each may carry its request's traceparent, which its webhook messages keep. */
export type PlantWriteOp = (
  | {
      kind: 'put';
      id: PlantId;
      name: string;
      tag: string | null;
      createOnly: boolean;
      ifMatch: IfMatch | undefined;
      ifNoneMatch: IfNoneMatch | undefined;
    }
  | {
      kind: 'patch';
      id: PlantId;
      name: string | undefined;
      tag: string | null | undefined;
      ifMatch: IfMatch | undefined;
      ifNoneMatch: IfNoneMatch | undefined;
    }
  | { kind: 'delete'; id: PlantId; ifMatch: IfMatch | undefined; ifNoneMatch: IfNoneMatch | undefined }
) & { traceparent?: string | undefined };

export interface WriteResults {
  put: Outcomes['put'];
  patch: PatchResult;
  delete: DeleteResult;
  importStage: null;
  /** The counts, or (create-only) the first id that exists already. */
  importCommit: Outcomes['import'];
  importAbort: null;
  /** A name an active token already has is answered, not thrown: a throw would fail the whole batch. */
  createToken: Outcomes['createToken'];
  revokeToken: boolean;
  createEndpoint: Outcomes['createEndpoint'];
  /** False when there is no such endpoint. */
  updateEndpoint: boolean | 'changed';
  deleteEndpoint: boolean | 'changed';
  rotateSecret: Outcomes['rotateSecret'];
  /** Messages queued again, or no such endpoint. */
  replay: Outcomes['replay'];
  claimDue: DueMessage[];
  recordAttempts: null;
  releaseClaims: null;
  deleteExpired: number;
  deleteExpiredEvents: number;
  /** Events the search index has still to read (it goes on reading them in the background). */
  indexSearch: number;
  /** Plants in the index rebuilt. */
  rebuildSearch: number;
  /** The write's outcome, kept under its key; or the one an earlier request kept there (and no write made). */
  keyed: KeptOutcome;
  /** Outcomes deleted, their time to live past (at most the limit). */
  deleteExpiredKeys: number;
  probe: null;
}

/**
 * Rows of an import as they cross to the writer thread: columns rather than objects (a few values to
 * copy instead of thousands), names and tags joined by U+0000, which neither may hold.
 */
export interface StagedRows {
  ids: BigInt64Array;
  /** Each row's name, then its tag or nothing, every value followed by U+0000. */
  text: string;
  /** 1 where the row has a tag. */
  tagged: Uint8Array;
}

/** Rows as StagedRows. */
export function stageRows(rows: readonly StoredPlant[]): StagedRows {
  const ids = new BigInt64Array(rows.length);
  const tagged = new Uint8Array(rows.length);
  const parts: string[] = [];
  rows.forEach((row, i) => {
    ids[i] = BigInt(row.id);
    parts.push(row.name);
    if (row.tag !== undefined) {
      tagged[i] = 1;
      parts.push(row.tag);
    }
  });
  return { ids, tagged, text: parts.join('\u0000') };
}

export type WriteKind = WriteOp['kind'];
export type WriteOf<K extends WriteKind> = Extract<WriteOp, { kind: K }>;

/**
 * The writer thread's answer to one batch: every result in order, how many webhook messages the batch
 * queued for delivery and how many events it recorded in the feed, or why the batch did not commit.
 */
export type BatchReply =
  | {
      ok: true;
      results: Array<WriteResults[WriteKind]>;
      queued: number;
      recorded: number;
      /** Committed after a batch that failed as unavailable, but changing no row: no sign that the store takes writes again. */
      nothingWritten?: true;
    }
  | { ok: false; error: ClassifiedError };

/** Told by the thread of its own accord: the search index could not take a step (said once until one succeeds). */
export interface IndexFailure {
  indexFailed: string;
}

/**
 * Sent just before a batch: until when (epoch ms) its BEGIN IMMEDIATE may wait for the file's lock, its
 * oldest write's deadline (DB_TIMEOUT_MS from its arrival). A time, not a length: what the thread does
 * before it takes the batch (an index step) comes out of the batch's wait, not on top of it.
 */
export interface BatchLockWait {
  lockWaitUntil: number;
}

export interface WriterSettings {
  path: string;
  synchronous: 'FULL' | 'NORMAL';
  busyTimeoutMs: number;
}
