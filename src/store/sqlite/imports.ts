import type { AnyOutcome, KeyClaim } from '../idempotency.js';
import { ImportConflictError, type PlantImport } from '../store.js';
import { stageRows } from './writer/protocol.js';
import type { WriteThread } from './writer/thread.js';

/** Imports in progress are told apart by a number of this process's. */
let imports = 0;

/** How each import this store started commits under an Idempotency-Key (sqlite/idempotency.ts), by its session. */
const keyedCommits = new WeakMap<PlantImport, (claim: KeyClaim, createOnly: boolean) => Promise<AnyOutcome>>();

/**
 * A bulk import on SQLite: rows are staged on the writer thread's connection as they arrive, each chunk in
 * the group-commit batch it travels with (writer/imports.ts), and merged into the plants by one batch at
 * the commit, so nobody sees half an import.
 */
export function sqliteImport(writer: WriteThread): PlantImport {
  const importId = ++imports;
  let done = false;
  const session: PlantImport = {
    async add(rows) {
      if (rows.length > 0) await writer.write({ kind: 'importStage', importId, rows: stageRows(rows) });
    },
    async commit({ createOnly }) {
      const result = await writer.write({ kind: 'importCommit', importId, createOnly });
      done = true;
      if ('conflict' in result) throw new ImportConflictError(result.conflict);
      return result;
    },
    async abort() {
      if (done) return;
      done = true;
      await writer.write({ kind: 'importAbort', importId });
    },
  };
  keyedCommits.set(session, async (claim, createOnly) => {
    // The same commit, under the key: the staged rows are dropped when the key has an outcome already.
    const outcome = await writer.write({ kind: 'keyed', claim, write: { kind: 'importCommit', importId, createOnly } });
    done = true;
    return outcome;
  });
  return session;
}

/** Commits an import this store started, under a claim on a key. */
export function commitImportUnder(session: PlantImport, claim: KeyClaim, createOnly: boolean): Promise<AnyOutcome> {
  const commit = keyedCommits.get(session);
  if (commit === undefined) throw new Error('the import was not started by this store');
  return commit(claim, createOnly);
}
