import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { processTree } from './proc.js';
import type { Running } from './servers.js';

/**
 * Idle memory: the service started on an empty store and left alone, its resident memory read every second,
 * summed over the supervisor and its worker, two ways:
 * - RSS (VmRSS): each process's resident pages, as `ps` and `top` show them. Summed, the pages the two
 *   processes share (the node binary's, about 36 MB) count twice. The target reads this sum: what an
 *   operator adds up from `ps`, and a figure no other process on the machine changes.
 * - PSS (/proc/<pid>/smaps_rollup): each shared page divided among the processes that map it, so that the
 *   sum counts it once. It is the service's fair share of the machine, but smaller the more other node
 *   processes run (they share the binary's pages too), so it is reported beside RSS, not instead of it.
 * Two figures each: a few seconds after it is ready
 * (what a newly started instance holds) and
 * where it settles once V8's memory reducer has run (it shrinks the young generation, grown while
 * starting, some 30 s after allocation stops).
 */

export interface IdleMeasurement {
  /** Seconds after ready → VmRSS and PSS in MB, each summed over the process tree. */
  samples: [seconds: number, rssMb: number, pssMb: number][];
  afterStartMb: number;
  settledMb: number;
  afterStartPssMb: number;
  settledPssMb: number;
}

/** The figure the target is about (issue 21: ≤ 90 MB). */
const TARGET_MB = 90;
/** "A few seconds after ready". */
const AFTER_START_S = 5;

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

function pssMb(pid: number): number {
  const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'latin1'));
  if (!match) throw new Error(`no Pss for process ${pid}`);
  return Number(match[1]) / 1024;
}

/**
 * What the service holds: `plant-store serve` is a supervisor and its worker (since 1.1.0), so the figure
 * is the sum over the process tree, not the supervisor's alone, which would leave the worker out.
 */
function serviceMb(pid: number): [rss: number, pss: number] {
  const tree = processTree(pid);
  return [tree.reduce((sum, each) => sum + rssMb(each), 0), tree.reduce((sum, each) => sum + pssMb(each), 0)];
}

export async function measureIdle(start: () => Promise<Running>, seconds: number): Promise<IdleMeasurement> {
  const server = await start();
  try {
    const samples: [number, number, number][] = [];
    for (let s = 1; s <= seconds; s++) {
      await sleep(1000);
      samples.push([s, ...serviceMb(server.pid)]);
    }
    const afterStart = samples[Math.min(AFTER_START_S, samples.length) - 1]!;
    const last = samples.slice(-5);
    return {
      samples,
      afterStartMb: afterStart[1],
      settledMb: Math.max(...last.map(([, rss]) => rss)),
      afterStartPssMb: afterStart[2],
      settledPssMb: Math.max(...last.map(([, , pss]) => pss)),
    };
  } finally {
    await server.stop();
  }
}

export function idleTable(runs: IdleMeasurement[]): string {
  const range = (values: number[]) => {
    const [low, high] = [Math.min(...values), Math.max(...values)].map((v) => v.toFixed(0));
    return low === high ? low! : `${low}–${high}`;
  };
  const settled = runs.map((r) => r.settledMb);
  const seconds = runs[0]!.samples.length;
  return [
    `| service, empty store, no requests | runs | RSS ${AFTER_START_S} s after ready, MB | RSS settled (last 5 of ${seconds} s), MB | PSS ${AFTER_START_S} s after ready, MB | PSS settled, MB | target (reads RSS) |`,
    '|---|---:|---:|---:|---:|---:|---|',
    `| idle | ${runs.length} | ${range(runs.map((r) => r.afterStartMb))} | ${range(settled)} | ${range(runs.map((r) => r.afterStartPssMb))} | ${range(runs.map((r) => r.settledPssMb))} | ≤ ${TARGET_MB} MB settled: **${Math.max(...settled) <= TARGET_MB ? 'met' : 'not met'}** |`,
    '',
    "RSS: each process's resident memory as `ps` shows it, summed over the supervisor and its worker (the node binary they share counts twice); the target reads it. PSS: the same with each shared page divided among the processes that map it (its sum counts a page once, but shrinks as other node processes on the machine share the binary).",
  ].join('\n');
}
