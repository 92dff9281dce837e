import type { KeyClaim } from '../idempotency.js';
import { importResult, type ImportOutcome, type PlantImport } from '../plant-store.js';
import type { KeptOutcome } from '../writes.js';
import { stageRows } from './writer/protocol.js';
import type { WriteThread } from './writer/thread.js';

/** Imports in progress are told apart by a number of this process's. */
let imports = 0;

/**
 * A bulk import on SQLite: rows are staged on the writer thread's connection as they arrive, each chunk in
 * the group-commit batch it travels with (writer/imports.ts), and merged into the plants by one batch at
 * the commit, so nobody sees half an import. Under a key, the commit is the writer thread's keyed message
 * (writer/idempotency.ts); when the key has an outcome already, the staged rows stay until `abort`.
 */
export function sqliteImport(writer: WriteThread): PlantImport {
  const importId = ++imports;
  let done = false;
  function settle(createOnly: boolean): Promise<ImportOutcome>;
  function settle(createOnly: boolean, claim: KeyClaim): Promise<KeptOutcome<'import'>>;
  function settle(createOnly: boolean, claim?: KeyClaim): Promise<ImportOutcome | KeptOutcome<'import'>>;
  async function settle(createOnly: boolean, claim?: KeyClaim): Promise<ImportOutcome | KeptOutcome<'import'>> {
    const commit = { kind: 'importCommit', importId, createOnly } as const;
    if (claim === undefined) {
      const outcome = await writer.write(commit);
      done = true;
      return outcome;
    }
    const kept = await writer.write({ kind: 'keyed', as: 'import', claim, write: commit });
    done = !kept.replayed;
    return kept as KeptOutcome<'import'>;
  }
  return {
    // Not async: the rows are turned into columns at once and not held while the writer thread stages
    // them (an async function's frame would keep its arguments until it returns: plants/import.ts).
    add(rows) {
      if (rows.length === 0) return Promise.resolve();
      return writer.write({ kind: 'importStage', importId, rows: stageRows(rows) }).then(() => undefined);
    },
    settle,
    async commit({ createOnly }) {
      return importResult(await settle(createOnly));
    },
    async abort() {
      if (done) return;
      done = true;
      await writer.write({ kind: 'importAbort', importId });
    },
  };
}
