import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One schema change: a versioned SQL file, applied once, in order, and recorded. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE_NAME = /^(\d{3,})_([a-z0-9_]+)\.sql$/;

/** The migration files of one database kind, from `migrations/<kind>/NNN_name.sql`, in version order. */
export function readMigrations(kind: 'sqlite' | 'postgres'): Migration[] {
  // From dist/src/store/ (or src/store/) up to the package root.
  const dir = fileURLToPath(new URL(`../../${import.meta.url.includes('/dist/') ? '../' : ''}migrations/${kind}/`, import.meta.url));
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const match = FILE_NAME.exec(file);
      if (!match) throw new Error(`migration file ${dir}${file} is not named NNN_name.sql`);
      return { version: Number(match[1]), name: match[2] ?? file, sql: readFileSync(dir + file, 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations/${kind}: expected version ${i + 1}, found ${m.version} (${m.name})`);
  });
  return migrations;
}
