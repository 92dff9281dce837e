import { ImportConflictError, type PlantImport } from '../store.js';
import { stageRows } from './writer/protocol.js';
import type { WriteThread } from './writer/thread.js';

/** Imports in progress are told apart by a number of this process's. */
let imports = 0;

/**
 * A bulk import on SQLite: rows are staged on the writer thread's connection as they arrive, each chunk in
 * the group-commit batch it travels with (writer/imports.ts), and merged into the plants by one batch at
 * the commit, so nobody sees half an import.
 */
export function sqliteImport(writer: WriteThread): PlantImport {
  const importId = ++imports;
  let done = false;
  return {
    async add(rows) {
      if (rows.length > 0) await writer.write({ kind: 'importStage', importId, rows: stageRows(rows) });
    },
    async commit({ createOnly }) {
      const result = await writer.write({ kind: 'importCommit', importId, createOnly });
      done = true;
      if ('conflict' in result) throw new ImportConflictError(result.conflict);
      return result;
    },
    async commitKept({ createOnly }, keep) {
      const kept = await writer.write({ kind: 'keyed', op: { kind: 'importCommit', importId, createOnly }, keep });
      done = true;
      return kept;
    },
    async abort() {
      if (done) return;
      done = true;
      await writer.write({ kind: 'importAbort', importId });
    },
  };
}
