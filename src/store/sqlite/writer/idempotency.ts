import { outcomeOf, parseHeaders, renderAnswer, type KeptAnswer, type Outcome } from '../../idempotency.js';
import { prepare, type Connection } from '../connection.js';
import type { KeyedOp, WriteKind, WriteOf, WriteResults } from './protocol.js';

/**
 * Answers kept for Idempotency-Keys, in the writer thread: a keyed write looks for an unexpired answer
 * under its key first, and makes its write only when there is none, then keeps its answer, all in the
 * batch's transaction (store/idempotency.ts). This thread is the store's only writer, so the look and the
 * write cannot be raced by this process; another process (the CLI, a worker of WEB_CONCURRENCY) writes
 * only after this transaction commits or before it began (the write lock is taken at BEGIN).
 */

interface KeptRow {
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
}

interface Needs {
  /** Applies one write as the batch does, without a key. */
  apply<K extends WriteKind>(op: WriteOf<K>): WriteResults[K];
  /** Drops a staged import that will not be committed (its key has an answer already). */
  dropImport(importId: number): void;
  /** The batch's time (epoch ms). */
  now(): number;
}

type Ops = { [K in 'keyed' | 'deleteExpiredKeys']: (op: WriteOf<K>) => WriteResults[K] };

/** What the write did, for its answer. */
function outcome(op: KeyedOp, result: WriteResults[KeyedOp['kind']]): Outcome {
  switch (op.kind) {
    case 'put':
      return outcomeOf.put(result as WriteResults['put']);
    case 'importCommit':
      return outcomeOf.import(result as WriteResults['importCommit']);
    case 'createEndpoint':
      return outcomeOf.createEndpoint();
    case 'rotateSecret':
      return outcomeOf.rotateSecret(result as boolean);
    case 'replay':
      return outcomeOf.replay(result as number | null);
  }
}

export function sqliteKeptAnswers(db: Connection, needs: Needs): Ops {
  const find = prepare<[string, string, number], KeptRow>(
    db,
    'SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE owner = ? AND key = ? AND expires_at > ?',
  );
  // REPLACE: an expired answer not swept yet gives way.
  const keep = prepare<[string, string, string, number, string, string, number]>(
    db,
    'INSERT OR REPLACE INTO idempotency_keys (owner, key, fingerprint, status, headers, body, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const sweep = prepare<[number]>(db, 'DELETE FROM idempotency_keys WHERE expires_at <= ?');
  return {
    keyed({ op, keep: claim }): KeptAnswer {
      const now = needs.now();
      const found = find.get(claim.owner, claim.key, now);
      if (found !== undefined) {
        if (op.kind === 'importCommit') needs.dropImport(op.importId);
        return { fingerprint: found.fingerprint, status: found.status, headers: parseHeaders(found.headers), body: found.body, earlier: true };
      }
      const answer = renderAnswer(claim.answers, outcome(op, needs.apply(op)));
      keep.run(claim.owner, claim.key, claim.fingerprint, answer.status, JSON.stringify(answer.headers), answer.body, now + claim.ttlMs);
      return { ...answer, fingerprint: claim.fingerprint, earlier: false };
    },
    deleteExpiredKeys() {
      return sweep.run(needs.now()).changes;
    },
  };
}
