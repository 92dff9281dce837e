import {
  replayOf,
  type AnyOutcome,
  type EarlierAnswer,
  type IdempotencyStore,
  type KeyClaim,
  type KeyedOutcome,
  type KeyedWrite,
  type KeyRow,
} from '../idempotency.js';
import { prepare, type Connection } from './connection.js';
import { guard } from './errors.js';
import { commitImportUnder } from './imports.js';
import { putOp } from './plants.js';
import { createTokenOp } from './tokens.js';
import { FIND_KEY, KEPT_SQL } from './writer/idempotency.js';
import type { KeyedOp } from './writer/protocol.js';
import type { WriteThread } from './writer/thread.js';

/**
 * Idempotency-Keys on SQLite: outcomes found on the main thread's connection; every keyed write, with its
 * look for an earlier outcome, made by the writer thread in its batch (writer/idempotency.ts), as the
 * same message the write is without a key.
 */
export class SqliteIdempotency implements IdempotencyStore {
  private readonly found;
  private readonly kept;

  constructor(
    db: Connection,
    private readonly writer: WriteThread,
  ) {
    this.found = prepare<[string, string, number], KeyRow>(db, FIND_KEY);
    this.kept = prepare<[number], number>(db, KEPT_SQL).pluck();
  }

  write<W extends KeyedWrite>(claim: KeyClaim, write: W): Promise<KeyedOutcome<W['kind']> | EarlierAnswer> {
    // The writer thread answers the outcome of the write's kind, or the one an earlier request kept.
    if (write.kind === 'import') return commitImportUnder(write.session, claim, write.createOnly);
    return this.writer.write({ kind: 'keyed', claim, write: writerOp(write) });
  }

  find(owner: string, key: string): Promise<AnyOutcome | undefined> {
    return guard(() => {
      const row = this.found.get(owner, key, Date.now());
      return row && replayOf(row);
    });
  }

  deleteExpired(limit: number): Promise<number> {
    return this.writer.write({ kind: 'deleteExpiredKeys', limit });
  }

  count(): Promise<number> {
    return guard(() => this.kept.get(Date.now()) ?? 0);
  }
}

/** A keyed write as the writer thread's message for it without a key. */
function writerOp(write: Exclude<KeyedWrite, { kind: 'import' }>): KeyedOp {
  switch (write.kind) {
    case 'put':
      return putOp(write.plant, write.options);
    case 'createEndpoint':
      return { kind: 'createEndpoint', endpoint: write.endpoint };
    case 'rotateSecret':
      return { kind: 'rotateSecret', id: write.id, secret: write.secret, previousUntil: write.previousUntil };
    case 'replay':
      return { kind: 'replay', endpointId: write.endpointId, since: write.since, until: write.until, now: Date.now() };
    case 'createToken':
      return { ...createTokenOp(write.token), secret: write.secret };
  }
}
