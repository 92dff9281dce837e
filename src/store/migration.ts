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
}

/**
 * The migrations are modules (not .sql files read at run time), so that they travel with the compiled
 * code whatever the directory layout. Versions must run 1, 2, 3… without a gap.
 */
export function checked(kind: string, migrations: Migration[]): Migration[] {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`${kind} migrations: expected version ${i + 1}, found ${m.version} (${m.name})`);
    if (kind === 'sqlite' && m.steps)
      throw new Error(`sqlite migration ${m.version} (${m.name}) has steps: SQLite applies each migration in one transaction`);
  });
  return migrations;
}
