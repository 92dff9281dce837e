import { KEY_COLUMNS, keptUnderKey, madeUnder, outcomeText, replayOf, type KeyRow } from '../../idempotency.js';
import type { KeptOutcome } from '../../writes.js';
import { prepare, type Connection } from '../connection.js';
import type { WriteKind, WriteOf, WriteResults } from './protocol.js';

/**
 * Writes under Idempotency-Keys in the writer thread (store/idempotency.ts): a keyed write looks for an
 * unexpired outcome under its key first, and makes its write, as without a key, only when there is none;
 * then keeps its outcome under the key, all in the batch's transaction. This thread is the store's only
 * writer, so the look and the write cannot be raced by this process; another process (the CLI, a worker of
 * WEB_CONCURRENCY) writes only after this transaction commits or before it began (the write lock is taken
 * at BEGIN).
 */

/** The unexpired outcome under an owner's key, at a time (epoch ms): the one look, of this thread and the main thread. */
export const FIND_KEY = `SELECT ${KEY_COLUMNS} FROM idempotency_keys WHERE owner = ? AND key = ? AND expires_at > ?`;

/**
 * How many outcomes are kept, expired or not: counted by this thread as it keeps and sweeps them (in
 * counters, so that nobody counts a million rows for a gauge); the main thread takes the expired away.
 */
export const KEPT_SQL = `SELECT (SELECT value FROM counters WHERE name = 'idempotency_keys')
  - (SELECT count(*) FROM idempotency_keys WHERE expires_at <= ?)`;

interface Needs {
  /** Applies one write as the batch does, without a key: its result is its outcome (protocol.ts). */
  apply<K extends WriteKind>(op: WriteOf<K>): WriteResults[K];
  /** The batch's time (epoch ms). */
  now(): number;
}

type Ops = { [K in 'keyed' | 'deleteExpiredKeys']: (op: WriteOf<K>) => WriteResults[K] };

/**
 * The keyed writes and the sweep, and the count of kept outcomes: changed in memory through a batch and
 * written back by `save`, in the batch's transaction (a failed batch `forget`s it).
 */
export function sqliteKeyWrites(db: Connection, needs: Needs): { ops: Ops; save(): void; forget(): void } {
  const find = prepare<[string, string, number], KeyRow>(db, FIND_KEY);
  const insert = prepare<[string, string, string, string, string, number]>(
    db,
    'INSERT INTO idempotency_keys (owner, key, fingerprint, kind, outcome, expires_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, key) DO NOTHING',
  );
  // An expired outcome not swept yet gives way.
  const takeOver = prepare<[string, string, string, number, string, string]>(
    db,
    'UPDATE idempotency_keys SET fingerprint = ?, kind = ?, outcome = ?, expires_at = ? WHERE owner = ? AND key = ?',
  );
  // The longest expired first, found on the expiry index; by the primary key (the table has no rowid).
  const sweep = prepare<[number, number]>(
    db,
    `DELETE FROM idempotency_keys WHERE (owner, key) IN
       (SELECT owner, key FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
  );
  const count = prepare<[number]>(db, "UPDATE counters SET value = value + ? WHERE name = 'idempotency_keys'");
  /** Outcomes kept (+) and swept (−) by this batch so far. */
  let added = 0;
  return {
    ops: {
      keyed({ as, claim, write }) {
        const now = needs.now();
        const found = find.get(claim.owner, claim.key, now);
        // The key's earlier outcome, of the same request (else the caller refuses it): nothing is written.
        // (An import's staged rows are dropped by its abort.)
        if (found !== undefined) return replayOf(found) as KeptOutcome;
        const made = madeUnder(claim, as, needs.apply(write));
        if (!keptUnderKey(made.outcome)) return made;
        const text = outcomeText(made.outcome);
        const expires = now + claim.ttlMs;
        if (insert.run(claim.owner, claim.key, claim.fingerprint, as, text, expires).changes === 1) added++;
        else takeOver.run(claim.fingerprint, as, text, expires, claim.owner, claim.key);
        return made;
      },
      deleteExpiredKeys({ limit }) {
        const deleted = sweep.run(needs.now(), limit).changes;
        added -= deleted;
        return deleted;
      },
    },
    save() {
      if (added !== 0) count.run(added);
      added = 0;
    },
    forget() {
      added = 0;
    },
  };
}
