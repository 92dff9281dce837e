import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { after } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';

import { findPostgresBin, freePort } from './pg-server.js';
import { sleep, until } from '../../toolkit.js';

/**
 * A throwaway pg_auto_failover formation on loopback: a monitor and two data nodes (a primary and its
 * secondary, replicating synchronously), each run by its own `pg_autoctl run`, in a temp directory
 * removed when the test file ends. The monitor's health checks are shortened from their defaults
 * (5 s checks, 20 s before a node is unhealthy, 30 s for the old primary to demote itself) so that a
 * failover takes seconds, not a minute. As root, everything runs as the `postgres` user.
 */

const run = promisify(execFile);
const PG_AUTOCTL = '/usr/bin/pg_autoctl';
const POSTGRES_USER = 'postgres';

/** The monitor's settings for a quick failover on loopback (milliseconds). */
const QUICK_HEALTH_CHECKS: Record<string, number> = {
  health_check_period: 1000,
  health_check_timeout: 1000,
  health_check_max_retries: 1,
  health_check_retry_delay: 500,
  node_considered_unhealthy_timeout: 2000,
  primary_demote_timeout: 2000,
};

/** Why the pg_auto_failover test cannot run here, or undefined when it can. */
export function autoFailoverUnavailableReason(): string | undefined {
  const bin = findPostgresBin();
  const version = bin?.split('/').at(-2);
  if (!bin || !existsSync(PG_AUTOCTL) || !existsSync(`/usr/share/postgresql/${version}/extension/pgautofailover.control`)) {
    return `pg_auto_failover not found (${PG_AUTOCTL} and the pgautofailover extension): install the Debian package postgresql-${version ?? 'NN'}-auto-failover to run the pg_auto_failover test`;
  }
  return undefined;
}

interface Node {
  name: string;
  port: number;
  dataDir: string;
  keeper: ChildProcess;
}

export class AutoFailover {
  private readonly nodes = new Map<string, Node>();

  private constructor(
    private readonly dir: string,
    private readonly asUser: boolean,
    private readonly monitorPort: number,
  ) {}

  /** The monitor, then node1 (the primary), then node2 (its secondary); resolves once both are in those states. */
  static async start(cleanup: typeof after): Promise<AutoFailover> {
    const [monitor, ...nodes] = await distinctFreePorts(3);
    const ports = { monitor: monitor!, nodes };
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-paf-'));
    const asUser = process.getuid?.() === 0;
    if (asUser) {
      const [uid, gid] = await Promise.all([run('id', ['-u', POSTGRES_USER]), run('id', ['-g', POSTGRES_USER])]);
      chownSync(dir, Number(uid.stdout), Number(gid.stdout));
    }
    const formation = new AutoFailover(dir, asUser, ports.monitor);
    cleanup(() => formation.remove());

    await formation.create('monitor', ports.monitor, []);
    formation.runNode('monitor', ports.monitor);
    await until(() => formation.monitorAnswers(), 'the pg_auto_failover monitor', { timeoutMs: 30_000 });
    for (const [setting, value] of Object.entries(QUICK_HEALTH_CHECKS)) {
      await formation.monitorSql(`ALTER SYSTEM SET pgautofailover.${setting} = ${value}`);
    }
    await formation.monitorSql('SELECT pg_reload_conf()');

    const monitorUri = `postgres://autoctl_node@127.0.0.1:${ports.monitor}/pg_auto_failover?sslmode=disable`;
    for (const [i, port] of ports.nodes.entries()) {
      const name = `node${i + 1}`;
      await formation.create(name, port, ['--monitor', monitorUri, '--dbname', 'plants', '--name', name]);
      formation.runNode(name, port);
      await formation.waitForStates(i === 0 ? { node1: ['single', 'wait_primary', 'primary'] } : { node1: ['primary'], node2: ['secondary'] });
    }
    return formation;
  }

  /**
   * The connection string pg_auto_failover gives its applications (every node, target_session_attrs=
   * read-write), with a user, which it leaves out (libpq would take the OS user's name; pg wants one).
   */
  async uri(): Promise<string> {
    const out = await this.pgAutoctl(['show', 'uri', '--formation', 'default', '--pgdata', join(this.dir, 'monitor')]);
    // Its sslmode=prefer means "TLS if the server offers it" to libpq; pg 8 reads it as verify-full, and
    // these nodes run without TLS (--no-ssl).
    return out.trim().replace('postgres://', `postgres://${POSTGRES_USER}@`).replace('sslmode=prefer', 'sslmode=disable');
  }

  port(name: string): number {
    return this.nodes.get(name)!.port;
  }

  /** SIGKILL to a node's pg_autoctl and everything under it (its Postgres included): the node's machine dies. */
  async kill(name: string): Promise<void> {
    const keeper = this.nodes.get(name)!.keeper;
    const pids = await descendants(keeper.pid!);
    for (const pid of [keeper.pid!, ...pids]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    this.nodes.delete(name);
  }

  /** Each node's state as the monitor last heard it reported. */
  async states(): Promise<Record<string, string>> {
    const rows = await this.monitorSql<{ nodename: string; reportedstate: string }>('SELECT nodename, reportedstate FROM pgautofailover.node');
    return Object.fromEntries(rows.map((r) => [r.nodename, r.reportedstate]));
  }

  private async waitForStates(wanted: Record<string, string[]>): Promise<void> {
    await until(
      async () => {
        const states: Record<string, string> = await this.states().catch(() => ({}));
        return Object.entries(wanted).every(([node, allowed]) => allowed.includes(states[node] ?? ''));
      },
      `pg_auto_failover nodes in states ${JSON.stringify(wanted)}`,
      { timeoutMs: 60_000, everyMs: 250 },
    );
  }

  private env(): NodeJS.ProcessEnv {
    // pg_autoctl keeps its configuration and state under XDG directories: here, inside the temp directory.
    return {
      PATH: `${findPostgresBin()}:${process.env.PATH ?? ''}`,
      // initdb takes the encoding from the locale: without one, SQL_ASCII, where Unicode case folding
      // (plant search) cannot run. The service wants UTF8, as a cluster made by initdb -E UTF8 has.
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      XDG_CONFIG_HOME: join(this.dir, 'config'),
      XDG_DATA_HOME: join(this.dir, 'data'),
      XDG_RUNTIME_DIR: join(this.dir, 'run'),
    };
  }

  private command(args: string[]): [string, string[]] {
    return this.asUser ? ['runuser', ['-u', POSTGRES_USER, '--', PG_AUTOCTL, ...args]] : [PG_AUTOCTL, args];
  }

  private async pgAutoctl(args: string[]): Promise<string> {
    const [cmd, cmdArgs] = this.command(args);
    try {
      return (await run(cmd, cmdArgs, { cwd: this.dir, env: this.env(), timeout: 120_000 })).stdout;
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(`pg_autoctl ${args[0]} ${args[1] ?? ''} failed: ${e.message}\n${e.stderr ?? ''}`);
    }
  }

  private async create(name: string, port: number, extra: string[]): Promise<void> {
    const kind = name === 'monitor' ? 'monitor' : 'postgres';
    await this.pgAutoctl([
      'create',
      kind,
      '--pgdata',
      join(this.dir, name),
      '--pgport',
      String(port),
      '--hostname',
      '127.0.0.1',
      ...(kind === 'postgres' ? ['--listen', '127.0.0.1'] : []),
      '--auth',
      'trust',
      '--no-ssl',
      '--pgctl',
      join(findPostgresBin()!, 'pg_ctl'),
      ...extra,
    ]);
  }

  private runNode(name: string, port: number): void {
    const [cmd, args] = this.command(['run', '--pgdata', join(this.dir, name)]);
    const keeper = spawn(cmd, args, { cwd: this.dir, env: this.env(), stdio: 'ignore' });
    this.nodes.set(name, { name, port, dataDir: join(this.dir, name), keeper });
  }

  private async monitorAnswers(): Promise<boolean> {
    return this.monitorSql('SELECT 1').then(
      () => true,
      () => false,
    );
  }

  private async monitorSql<R extends pg.QueryResultRow>(text: string): Promise<R[]> {
    const client = new pg.Client({ connectionString: `postgres://${POSTGRES_USER}@127.0.0.1:${this.monitorPort}/pg_auto_failover` });
    await client.connect();
    try {
      return (await client.query<R>(text)).rows;
    } finally {
      await client.end();
    }
  }

  /** Stops what still runs (pg_autoctl stops its Postgres on SIGTERM), then removes the directory. */
  private async remove(): Promise<void> {
    const running = [...this.nodes.values()].filter((n) => n.keeper.exitCode === null && n.keeper.signalCode === null);
    await Promise.all(
      running.map(async ({ name, keeper }) => {
        await this.pgAutoctl(['stop', '--pgdata', join(this.dir, name), '--immediate']).catch(() => undefined);
        const exited = new Promise((resolve) => keeper.once('close', resolve));
        await Promise.race([exited, sleep(10_000)]);
        if (keeper.exitCode === null && keeper.signalCode === null) await this.kill(name);
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `count` free loopback ports, no two alike (the kernel may hand out a port just released again). */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** Every process under `pid`, children first found first. */
async function descendants(pid: number): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(pid)]).catch(() => ({ stdout: '' }));
  const children = stdout
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((child) => child > 0);
  return [...children, ...(await Promise.all(children.map(descendants))).flat()];
}
