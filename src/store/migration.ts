/** One schema change: applied once, in version order, and recorded in schema_migrations. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The migrations are modules (not .sql files read at run time), so that they travel with the compiled
 * code whatever the directory layout. Versions must run 1, 2, 3… without a gap.
 */
export function checked(kind: string, migrations: Migration[]): Migration[] {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`${kind} migrations: expected version ${i + 1}, found ${m.version} (${m.name})`);
  });
  return migrations;
}
