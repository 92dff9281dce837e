import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/** `npm run bench`'s command line, read once: what every part of the run (servers, measurements, report) is told. */

const USAGE = `npm run bench [-- options]

  --only=post64,get100k   these scenarios only (keys: --list; also idle, import1m); no record written
  --runs=N                runs per server and scenario, alternating (at least 2)
  --quick                 0.5 s warm-up + 2 s per measurement; no record written
  --postgres              the service on PostgreSQL: a throwaway local cluster (or DATABASE_URL=postgres://…)
  --compare=<other checkout>/dist/src/server.js   another build measured in the same alternation
  --peers                 json-server 0.17 beside the 64-connection POST scenario
  --cpu-prof              V8 CPU profiles of the service (run from its modules, dist/src/, for the stage table) in $TMPDIR/plant-store-profiles/<run>/
                          (node dist/bench/profile.js [--stages] reads them: bench/stages.ts)
  --sqlite-synchronous=NORMAL   comparison only: what the fsync costs
  --list                  the scenarios, their keys and titles; nothing is measured
  --help                  this text

A full run (no --only, no --quick) writes its tables to bench/history/<date>-<store>-run.md.
`;

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    peers: { type: 'boolean', default: false },
    postgres: { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    runs: { type: 'string', default: '2' },
    only: { type: 'string' },
    'sqlite-synchronous': { type: 'string' },
    compare: { type: 'string' },
    list: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (options.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const runs = Number(options.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number from 1, got ${options.runs}`);
const pgUrl = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : undefined;

export const SETTINGS = {
  /** Print the scenarios and stop. */
  list: options.list,
  quick: options.quick,
  peers: options.peers,
  cpuProf: options['cpu-prof'],
  /** One folder per run: each service run's profiles (one per thread) beside what the run measured (run-<pid>.json, bench/stages.ts). */
  profileDir: join(tmpdir(), 'plant-store-profiles', new Date().toISOString().replace(/[:.]/g, '-')),
  /** Runs per server and scenario: at least two, so that each server runs after the other. */
  runs: Math.max(2, runs),
  /** Scenario keys to run (undefined: all). */
  only: options.only?.split(','),
  /** For comparison only (how much the fsync costs): --sqlite-synchronous=NORMAL. The default, FULL, is what the targets are about. */
  synchronous: options['sqlite-synchronous'],
  /** Another build of the service (its dist/src/server.js) measured in the same run, as "compared": before/after a change. */
  compare: options.compare,
  warmupMs: options.quick ? 500 : 1000,
  durationMs: options.quick ? 2000 : 5000,
  token: 'bench-token-0123456789abcdef0123456789',
  /** A PostgreSQL server named by DATABASE_URL (one database per scenario, dropped after). */
  pgUrl,
  postgres: pgUrl !== undefined || options.postgres,
} as const;

/** Whether a scenario (or idle, import1m) is part of this run. */
export const runsScenario = (key: string) => SETTINGS.only === undefined || SETTINGS.only.includes(key);
