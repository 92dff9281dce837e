/** One schema change: applied once, in version order, and recorded in schema_migrations. */
export interface Migration {
  version: number;
  name: string;
  /** Applied in one transaction. */
  sql: string;
  /**
   * PostgreSQL only: statements run after `sql` has committed, one at a time and outside any transaction
   * (CREATE INDEX CONCURRENTLY, which does not hold writes, cannot run in one; a procedure that commits
   * batch by batch). The migration is recorded once the last has run; one interrupted is run again from
   * its first step at the next start, so each must be safe to run again. A step with `when` runs only
   * if that query answers true (one row, one boolean column).
   */
  steps?: ReadonlyArray<{ sql: string; when?: string }>;
  /**
   * PostgreSQL only: a contracting change, one the release before cannot run beside (it drops or
   * renames what that release still reads or writes, or adds a rule its writes break). Every other
   * migration must leave the release before fully working on the migrated schema, since a rolling upgrade
   * runs both on it (docs/upgrading.md); this one is applied only once no process of an older release is
   * running (instances.ts: the registry), at a later start or `plant-store migrate`, and held until then.
   * A contract that can simply wait for the next release should: that release applies it at its start.
   */
  contract?: true;
}

/** A migration that opening a store applied. */
export type AppliedMigration = Pick<Migration, 'version' | 'name'>;

/** What opening a store did to its schema: made it from nothing, and the migrations it applied, in order (none: it was up to date). */
export interface Migrated {
  readonly created: boolean;
  readonly applied: readonly AppliedMigration[];
}

/** "migration 10 (webhook_int64_strings)", "migrations 10 (instances), 11 (webhook_int64_strings)": what `plant-store migrate` and the server's log say. */
export function migrationNames(applied: readonly AppliedMigration[]): string {
  return `migration${applied.length === 1 ? '' : 's'} ${applied.map((m) => `${m.version} (${m.name})`).join(', ')}`;
}

/**
 * Every schema change, by name, in the order it was made, with the version it has on each store: the two
 * stores number alike but where one needed a change the other did not (PostgreSQL's shared rate-limit
 * counts, SQLite's search index kept after the writes), and a version once released is never renumbered
 * (each database records the versions it has applied). docs/development.md shows this table; each store's
 * list must follow it (checked below, and by test/store/migration.test.ts).
 */
export const MIGRATION_TABLE: ReadonlyArray<{ name: string; sqlite?: number; postgres?: number; does: string }> = [
  { name: 'plants_and_tokens', sqlite: 1, postgres: 1, does: 'plants, tokens and schema_migrations' },
  { name: 'rate_limits', postgres: 2, does: 'rate-limit counts shared by the instances (SQLite counts in memory)' },
  { name: 'webhooks', sqlite: 2, postgres: 3, does: 'webhook endpoints and their outbox' },
  { name: 'plant_versions', sqlite: 3, postgres: 4, does: "each plant's version (its ETag), from one counter" },
  { name: 'plant_search', sqlite: 4, postgres: 5, does: 'folded names and the trigram index that q reads' },
  { name: 'webhook_trace_context', sqlite: 5, postgres: 6, does: "each outbox message's trace context" },
  { name: 'change_feed', sqlite: 6, postgres: 7, does: 'the change feed: one event per plant change' },
  { name: 'search_index_derived', sqlite: 7, does: 'the search index kept after the writes, its mark in the feed (PostgreSQL keeps it in them)' },
  { name: 'idempotency_keys', sqlite: 8, postgres: 8, does: 'answers kept for Idempotency-Keys' },
  { name: 'idempotency_outcomes', sqlite: 9, postgres: 9, does: 'outcomes kept instead, earlier answers moved under the kind answer' },
  { name: 'instances', postgres: 10, does: 'the processes on the database and the release each runs (SQLite has one host)' },
  { name: 'webhook_int64_strings', sqlite: 10, postgres: 11, does: "each webhook endpoint's choice of int64 values as strings in its bodies" },
  { name: 'plant_fold_dotless_i', postgres: 12, does: 'the fold of names keeps ı apart without a stand-in (SQLite folds in the service)' },
];

/**
 * The migrations are modules (not .sql files read at run time), so that they travel with the compiled
 * code whatever the directory layout. Versions must run 1, 2, 3… without a gap, each the version
 * MIGRATION_TABLE gives its name on this store.
 */
export function checked(kind: 'sqlite' | 'postgres', migrations: Migration[]): Migration[] {
  const table = MIGRATION_TABLE.filter((row) => row[kind] !== undefined);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`${kind} migrations: expected version ${i + 1}, found ${m.version} (${m.name})`);
    if (table[i]?.name !== m.name || table[i][kind] !== m.version)
      throw new Error(`${kind} migration ${m.version} (${m.name}) is not the one MIGRATION_TABLE names for that version (store/migration.ts)`);
    if (kind === 'sqlite' && m.steps)
      throw new Error(`sqlite migration ${m.version} (${m.name}) has steps: SQLite applies each migration in one transaction`);
    if (kind === 'sqlite' && m.contract)
      throw new Error(`sqlite migration ${m.version} (${m.name}) is a contract: on SQLite a contracting change waits for the next release`);
  });
  if (table.length !== migrations.length)
    throw new Error(`${kind} migrations: MIGRATION_TABLE names ${table.length}, the store has ${migrations.length}`);
  return migrations;
}
