import { performance } from 'node:perf_hooks';
import type { CommitObserver, PlantStore } from './store.js';

/**
 * The plant store with each write (put, patch, delete) reported to `onCommit` as a batch of one, with the
 * time from asking to the answer. For a store whose every write is its own statement or transaction
 * (PostgreSQL today), so that the commit metrics mean the same as on SQLite's group commit. A store that
 * groups writes itself calls its `onCommit` with each batch instead, and needs this no more. Reads, exports
 * and imports pass through untouched; a write that fails is not a commit and is not reported.
 */
export function observeCommits(plants: PlantStore, onCommit: CommitObserver): PlantStore {
  const timed =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = performance.now();
      const result = await write(...args);
      onCommit(1, (performance.now() - started) / 1000);
      return result;
    };
  return {
    get: (id) => plants.get(id),
    list: (options) => plants.list(options),
    count: (tag) => plants.count(tag),
    put: timed((plant, options) => plants.put(plant, options)),
    patch: timed((id, changes, options) => plants.patch(id, changes, options)),
    delete: timed((id, options) => plants.delete(id, options)),
    export: (options) => plants.export(options),
    startImport: () => plants.startImport(),
  };
}
