import type { PlantId } from '../plants/id.js';
import type { ClassifiedError } from './sqlite-rows.js';
import type { IfMatch, ImportResult, Plant, PutResult, VersionedPlant } from './store.js';
import type { AttemptRecord, DueMessage, EndpointChanges, NewEndpointRecord } from './webhook-store.js';

/**
 * The writes the SQLite writer thread commits, as messages: a tagged union, each kind with its own
 * result type (WriteResults). Every write of the store goes this one way (see write-thread.ts).
 */
export type WriteOp =
  | { kind: 'put'; id: PlantId; name: string; tag: string | null; createOnly: boolean; ifMatch: IfMatch | undefined }
  | { kind: 'patch'; id: PlantId; name: string | undefined; tag: string | null | undefined; ifMatch: IfMatch | undefined }
  | { kind: 'delete'; id: PlantId; ifMatch: IfMatch | undefined }
  | { kind: 'importStage'; importId: number; rows: Plant[] }
  | { kind: 'importCommit'; importId: number; createOnly: boolean }
  | { kind: 'importAbort'; importId: number }
  | { kind: 'createToken'; id: string; name: string; hash: Buffer; scopes: string; createdAt: string }
  | { kind: 'revokeToken'; idOrName: string; at: string }
  | { kind: 'createEndpoint'; endpoint: NewEndpointRecord }
  | { kind: 'updateEndpoint'; id: string; changes: EndpointChanges }
  | { kind: 'deleteEndpoint'; id: string }
  | { kind: 'rotateSecret'; id: string; secret: string; previousUntil: number }
  | { kind: 'replay'; endpointId: string; since: number; until: number | undefined; now: number }
  | { kind: 'claimDue'; limit: number; leaseMs: number; now: number }
  | { kind: 'recordAttempts'; attempts: AttemptRecord[]; disableAfterMs: number }
  | { kind: 'deleteExpired'; before: number };

export interface WriteResults {
  put: PutResult;
  patch: VersionedPlant | 'not-found' | 'precondition-failed';
  delete: 'deleted' | 'not-found' | 'precondition-failed';
  importStage: null;
  /** The counts, or (create-only) the first id that exists already. */
  importCommit: ImportResult | { conflict: PlantId };
  importAbort: null;
  /** A name an active token already has is answered, not thrown: a throw would fail the whole batch. */
  createToken: 'created' | 'duplicate-name';
  revokeToken: boolean;
  createEndpoint: null;
  /** False when there is no such endpoint. */
  updateEndpoint: boolean;
  deleteEndpoint: boolean;
  rotateSecret: boolean;
  /** Messages queued again; null when there is no such endpoint. */
  replay: number | null;
  claimDue: DueMessage[];
  recordAttempts: null;
  deleteExpired: number;
}

export type WriteKind = WriteOp['kind'];
export type WriteOf<K extends WriteKind> = Extract<WriteOp, { kind: K }>;

/**
 * The writer thread's answer to one batch: every result in order and how many webhook messages the
 * batch queued for delivery, or why the batch did not commit.
 */
export type BatchReply = { ok: true; results: Array<WriteResults[WriteKind]>; queued: number } | { ok: false; error: ClassifiedError };

export interface WriterSettings {
  path: string;
  synchronous: 'FULL' | 'NORMAL';
  busyTimeoutMs: number;
}
