import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { closeOtlpSink, HAS_EQUAL_WORK, targetsOf, type Target, type Workspace } from './contenders.js';
import type { ImportMeasurement } from './import.js';
import { IDLE_KEY, idleRuns, IMPORT_KEY, importRuns, line, maximumRate, measure } from './measure.js';
import { machine, writeRunRecord, type Measurement } from './report.js';
import { SCENARIOS } from './scenarios.js';
import { reportText } from './sections.js';
import { EQUAL_WORK_JS, HAS_TASKSET, ROOT } from './servers.js';
import { runsScenario, SETTINGS } from './settings.js';
import { postgresStores, sqliteStores } from './stores.js';

/**
 * npm run bench [-- --help]
 *
 * Runs every scenario (bench/scenarios.ts) against the baseline and the service alternately (at least twice
 * each), the servers pinned to CPU 0 and the load generator to CPU 1, and writes the tables of a full run to
 * a dated record, bench/history/<date>-<store>-run.md. DATABASE_URL=postgres://… or --postgres runs the service on PostgreSQL instead of SQLite.
 * The parts: the command line (settings.ts), the servers (contenders.ts, servers.ts), one run of one server
 * (measure.ts, load.ts), the report (sections.ts, report.ts, targets.ts).
 */

const RUN_BY_NAME = [IDLE_KEY, IMPORT_KEY];

function listScenarios(): void {
  for (const s of SCENARIOS) process.stdout.write(`${s.key.padEnd(14)} ${s.title}\n`);
  process.stdout.write(`${IDLE_KEY.padEnd(14)} the service's memory after start, on an empty store (bench/idle.ts)\n`);
  process.stdout.write(`${IMPORT_KEY.padEnd(14)} POST /plants/import of 1M plants into an empty store (bench/import.ts)\n`);
}

async function main(): Promise<void> {
  const unknown = SETTINGS.only?.filter((key) => !RUN_BY_NAME.includes(key) && !SCENARIOS.some((s) => s.key === key)) ?? [];
  if (unknown.length > 0) throw new Error(`--only: no scenario ${unknown.join(', ')} (npm run bench -- --list names them)`);
  if (SETTINGS.list) return listScenarios();
  if (!HAS_TASKSET) process.stderr.write('taskset not found: servers and load generator are NOT pinned to separate CPUs\n');
  if (!HAS_EQUAL_WORK) process.stderr.write(`${EQUAL_WORK_JS} not found: the equal-work prototype is left out\n`);
  if (SETTINGS.cpuProf) {
    mkdirSync(SETTINGS.profileDir, { recursive: true });
    process.stdout.write(`CPU profiles of the service in ${SETTINGS.profileDir} (node dist/bench/profile.js --stages ${SETTINGS.profileDir})\n`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-'));
  const workspace: Workspace = { dir, logFile: join(dir, 'servers.log') };
  const store = await (SETTINGS.postgres ? postgresStores(SETTINGS.pgUrl) : Promise.resolve(sqliteStores(dir))).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  const scenarios = SCENARIOS.filter((s) => runsScenario(s.key));
  const measurements: Measurement[] = [];
  let imports: ImportMeasurement[] = [];
  let idle: string | undefined;
  const started = Date.now();
  try {
    if (runsScenario(IDLE_KEY)) idle = (await idleRuns(store, workspace)).table;
    for (const scenario of scenarios) {
      process.stdout.write(`${scenario.title} (${store.label})\n`);
      if (scenario.seeded > 0) await store.url(scenario.seeded, scenario.names);
      const maxRates = new Map<Target, number>();
      for (let run = 0; run < SETTINGS.runs; run++) {
        for (const target of targetsOf(scenario)) {
          if (scenario.rateOf && !maxRates.has(target)) maxRates.set(target, await maximumRate(scenario, target, store, workspace, measurements));
          const m = await measure(target, scenario, store, workspace, maxRates.get(target));
          measurements.push(m);
          process.stdout.write(`${line(m)}\n`);
        }
      }
    }
    if (runsScenario(IMPORT_KEY)) imports = await importRuns(store, workspace);
  } finally {
    await store.close();
    await closeOtlpSink();
    rmSync(dir, { recursive: true, force: true });
  }

  const text = reportText({ measurements, scenarios, store: SETTINGS.postgres ? 'postgres' : 'sqlite', imports, ...(idle ? { idle } : {}) });
  process.stdout.write(`\n${text}\n`);
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}${SETTINGS.pgUrl ? ' (DATABASE_URL=postgres://…)' : ''}`;
  const generated = [
    `## ${SETTINGS.postgres ? 'PostgreSQL' : 'SQLite'} run`,
    '',
    `- Machine: ${machine()}`,
    `- Date: ${new Date().toISOString()}; command: \`${command}\`; took ${((Date.now() - started) / 1000).toFixed(0)} s`,
    `- Store: ${store.label}. Each measurement: ${SETTINGS.warmupMs} ms warm-up, then ${SETTINGS.durationMs} ms measured; ${SETTINGS.runs} runs per server, alternating.`,
    `- Pinning: ${HAS_TASKSET ? 'servers on CPU 0, load generator on CPU 1 (taskset)' : 'none (taskset missing)'}; service started as shipped: \`NODE_ENV=production node dist/server/index.js\` (the bundle \`plant-store serve\` runs), LOG_LEVEL default (info, one access line per request to a file).`,
    '',
    text,
  ].join('\n');
  if (!SETTINGS.only && !SETTINGS.quick) {
    const path = writeRunRecord(join(ROOT, 'bench', 'history'), SETTINGS.postgres ? 'postgres' : 'sqlite', generated);
    process.stdout.write(`\nwrote ${relative(ROOT, path)}: bring bench/RESULTS.md's figures up to date from it\n`);
  } else {
    process.stdout.write('\n(--only or --quick: no record written to bench/history/)\n');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
