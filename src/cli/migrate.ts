import { migrationNames } from '../store/migration.js';
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
      'Brings the store DATABASE_URL names up to the current schema, creating it (a SQLite file, and its folder) if it does not exist yet. It says which migrations it applied; run again, it changes nothing and says the schema is up to date. The server does the same when it starts, and logs the migrations it applied.',
    run: async () => {
      const { kind, warnings, where, migrated } = await withStore(
        (store, _config, where) => Promise.resolve({ kind: store.kind, warnings: store.warnings, where, migrated: store.migrated }),
        { create: true },
      );
      for (const warning of warnings) say(`plant-store: warning: ${warning}`);
      if (migrated.created) say(`created the ${kind} store ${where}, with the current schema`);
      else if (migrated.applied.length > 0) say(`applied ${migrationNames(migrated.applied)} to the ${kind} store ${where}`);
      else say(`the schema of the ${kind} store ${where} is up to date`);
    },
  },
};
