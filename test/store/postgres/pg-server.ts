import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { after } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { POSTGRES_MIGRATIONS } from '../../../src/store/postgres/migrations.js';

/**
 * A throwaway PostgreSQL cluster for one test file: initdb into a temp directory, started on a free
 * loopback port (no Unix socket), fsync off (the tests prove behaviour, not durability of this
 * cluster), stopped and removed when the file ends. As root, the server runs as the `postgres` user,
 * since PostgreSQL refuses to run as root. A cluster can also be a hot standby of another, streaming
 * from it (pg_basebackup -R), to be promoted when its primary is killed.
 */

const run = promisify(execFile);
const POSTGRES_USER = 'postgres';

/** The newest /usr/lib/postgresql/<version>/bin holding initdb, or undefined. */
export function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** Why the Postgres tests cannot run here, or undefined when they can. */
export function postgresUnavailableReason(): string | undefined {
  if (!findPostgresBin()) {
    return 'PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb): install the Debian "postgresql" package to run the PostgreSQL tests';
  }
  return undefined;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function uidOf(user: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', user]), run('id', ['-g', user])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export class TestPostgres {
  private constructor(
    readonly port: number,
    private readonly bin: string,
    private readonly dir: string,
    private readonly asUser: boolean,
  ) {}

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** Runs a server binary, as the postgres user when we are root. */
  private async exec(program: string, args: string[]): Promise<string> {
    const file = join(this.bin, program);
    const [cmd, cmdArgs] = this.asUser ? ['runuser', ['-u', POSTGRES_USER, '--', file, ...args]] : [file, args];
    try {
      const { stdout } = await run(cmd, cmdArgs, { cwd: this.dir, timeout: 120_000 });
      return stdout;
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(`${program} failed: ${e.message}\n${e.stderr ?? ''}`);
    }
  }

  /** A temp directory and a free port for a cluster, removed when the file ends. */
  private static async create(cleanup: typeof after): Promise<TestPostgres> {
    const bin = findPostgresBin();
    if (!bin) throw new Error(postgresUnavailableReason());
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-pg-'));
    const asUser = process.getuid?.() === 0;
    if (asUser) {
      const { uid, gid } = await uidOf(POSTGRES_USER);
      chownSync(dir, uid, gid);
    }
    const server = new TestPostgres(await freePort(), bin, dir, asUser);
    cleanup(async () => {
      await server.freeze(false).catch(() => undefined);
      await server.stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    });
    return server;
  }

  /**
   * Creates, starts, and registers the removal of a cluster. `settings` are added to (or replace) the
   * defaults below, by name.
   */
  static async start(cleanup: typeof after, settings: Record<string, string> = {}): Promise<TestPostgres> {
    const server = await TestPostgres.create(cleanup);
    await server.exec('initdb', ['-D', server.dataDir, '-U', POSTGRES_USER, '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    const all = {
      port: String(server.port),
      listen_addresses: "'127.0.0.1'",
      unix_socket_directories: "''",
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      shared_buffers: '16MB',
      max_connections: '200',
      ...settings,
    };
    const lines = Object.entries(all).map(([name, value]) => `${name} = ${value}`);
    writeFileSync(join(server.dataDir, 'postgresql.auto.conf'), `${lines.join('\n')}\n`);
    await server.startServer();
    return server;
  }

  /**
   * A hot standby of this (running) cluster: a base backup with -R (standby.signal, primary_conninfo),
   * started on a port of its own. It streams as `name` (its cluster_name, which is the application_name
   * synchronous_standby_names refers to). The primary must keep full_page_writes on.
   */
  async startStandby(cleanup: typeof after, name: string): Promise<TestPostgres> {
    const standby = await TestPostgres.create(cleanup);
    await standby.exec('pg_basebackup', [
      '-D',
      standby.dataDir,
      '-h',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-U',
      POSTGRES_USER,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
    // The backup brought the primary's postgresql.auto.conf; later lines win.
    appendFileSync(join(standby.dataDir, 'postgresql.auto.conf'), `port = ${standby.port}\ncluster_name = '${name}'\n`);
    await standby.startServer();
    return standby;
  }

  /** Ends recovery: the standby becomes a primary (pg_ctl promote, waiting until it accepts writes). */
  async promote(): Promise<void> {
    await this.exec('pg_ctl', ['promote', '-D', this.dataDir, '-w', '-t', '60']);
  }

  /** SIGKILL to the postmaster, as when its machine dies: no shutdown, its backends end when they notice. */
  kill(): void {
    process.kill(this.postmasterPid(), 'SIGKILL');
  }

  private postmasterPid(): number {
    return Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** Runs one statement as the superuser, in `database`. */
  async sql<R extends pg.QueryResultRow>(text: string, database = 'postgres'): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return (await client.query<R>(text)).rows;
    } finally {
      await client.end();
    }
  }

  /** Starts the (stopped) server and waits until it accepts connections. */
  async startServer(): Promise<void> {
    await this.exec('pg_ctl', ['start', '-D', this.dataDir, '-l', join(this.dir, 'server.log'), '-w', '-t', '120']);
  }

  /** Stops the server: 'fast' ends sessions with an admin-shutdown error, as an operator's restart does. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.exec('pg_ctl', ['stop', '-D', this.dataDir, '-m', mode, '-w', '-t', '120']);
  }

  /**
   * Freezes (SIGSTOP) or thaws (SIGCONT) the server and all its backends: a database that accepts
   * TCP connections but never answers, as behind a network partition.
   */
  async freeze(frozen: boolean): Promise<void> {
    const postmaster = this.postmasterPid();
    const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(postmaster)]);
    const pids = [
      postmaster,
      ...stdout
        .split('\n')
        .map((line) => Number(line.trim()))
        .filter((pid) => pid > 0),
    ];
    for (const pid of pids) process.kill(pid, frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  url(database: string): string {
    return `postgres://${POSTGRES_USER}@127.0.0.1:${this.port}/${database}`;
  }

  /** A new, empty database; its postgres:// URL. */
  createDatabase(): Promise<string> {
    return createDatabase(this.url('postgres'));
  }
}

let databases = 0;

/** FILE_COPY where the server knows it (PostgreSQL 15 and later), else its one way. */
async function fileCopy(client: pg.Client): Promise<string> {
  const version = await client.query<{ server_version_num: string }>('SHOW server_version_num');
  return Number(version.rows[0]!.server_version_num) >= 150_000 ? ' STRATEGY FILE_COPY' : '';
}

/**
 * A new, empty database on the server `adminUrl` reaches (as a superuser), or a copy of `template`; its
 * postgres:// URL. A copy is made file by file (PostgreSQL 15's FILE_COPY, about twice as fast as writing
 * it all to the WAL on the tests' clusters, which run without fsync).
 */
export async function createDatabase(adminUrl: string, template?: string): Promise<string> {
  const name = `plants_${process.pid}_${++databases}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const copy = template === undefined ? '' : ` TEMPLATE ${pg.escapeIdentifier(template)}${await fileCopy(client)}`;
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}${copy}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The migrated template of this server, by admin URL: made once per server (its name is a hash of the
 * migrations it holds, so a changed or new migration makes a new one), under an advisory lock, since the HTTP suites' processes
 * share the server.
 */
const templates = new Map<string, Promise<string>>();
/** Any number, the same in every process: the lock that makes a template once. */
const TEMPLATE_LOCK = 4_904_901;

async function migratedTemplate(adminUrl: string): Promise<string> {
  const name = `plants_template_${createHash('sha256').update(JSON.stringify(POSTGRES_MIGRATIONS)).digest('hex').slice(0, 16)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      // Made under another name and renamed when whole: a process killed half-way leaves no half template.
      const making = `${name}_making`;
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(making)}`);
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(making)}`);
      const url = new URL(adminUrl);
      url.pathname = `/${making}`;
      const migrator = new pg.Client({ connectionString: url.toString() });
      await migrator.connect();
      try {
        await migratePostgres(migrator);
      } finally {
        await migrator.end();
      }
      await client.query(`ALTER DATABASE ${pg.escapeIdentifier(making)} RENAME TO ${pg.escapeIdentifier(name)}`);
    }
  } finally {
    await client.end();
  }
  return name;
}

/**
 * A new database with the service's schema in place, as the release's migrations leave it; its postgres://
 * URL. Copied from a template migrated once (the store's open then finds nothing to migrate): an app of the
 * HTTP suites on PostgreSQL took some 450 ms to make and migrate its database, most of their time. A test
 * of the migrations themselves uses createDatabase.
 */
export async function createMigratedDatabase(adminUrl: string): Promise<string> {
  let template = templates.get(adminUrl);
  if (!template) templates.set(adminUrl, (template = migratedTemplate(adminUrl)));
  return createDatabase(adminUrl, await template);
}

export { TEST_PG_ENV } from '../../helpers.js';
