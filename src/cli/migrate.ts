import type { Command } from './command.js';
import { withStore } from './common.js';
import { say } from './output.js';

/** `plant-store migrate`: the one command that may create a store (a SQLite file and its folder) besides the server. */
export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply the schema migrations and exit',
  usesStore: true,
  actions: {
    summary: 'apply the schema migrations and exit',
    details:
      'Brings the store DATABASE_URL names up to the current schema, creating it (a SQLite file, and its folder) if it does not exist yet. Running it again changes nothing. The server does the same when it starts.',
    run: async () => {
      const { kind, warnings, where, created } = await withStore(
        (store, _config, where) => Promise.resolve({ kind: store.kind, warnings: store.warnings, where, created: store.created }),
        { create: true },
      );
      for (const warning of warnings) say(`plant-store: warning: ${warning}`);
      say(created ? `created the ${kind} store ${where}, with the current schema` : `the schema of the ${kind} store ${where} is up to date`);
    },
  },
};
