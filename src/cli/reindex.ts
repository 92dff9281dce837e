import type { Command } from './command.js';
import { withStore } from './common.js';
import { say } from './output.js';
import { count } from '../words.js';

/** `plant-store reindex`: the search index made anew from the stored plants. */
export const reindexCommand: Command = {
  name: 'reindex',
  summary: 'rebuild the search index of plant names from the plants',
  usesStore: true,
  actions: {
    summary: 'rebuild the search index of plant names from the plants',
    details:
      'Empties the index that GET /plants?q= reads and makes it anew from the stored plants, for the store DATABASE_URL names; the server may go on running meanwhile. On SQLite the index follows the writes by itself, and catches up at every start from where it got to: this is for an index you have reason to doubt. On PostgreSQL it rebuilds the trigram index without blocking writes (REINDEX CONCURRENTLY).',
    run: async () => {
      const { plants, where } = await withStore(async (store, _config, where) => ({ plants: await store.searchIndex.rebuild(), where }));
      say(`the search index of ${where} holds every plant (${count(plants, 'plant')})`);
    },
  },
};
