import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, release, totalmem } from 'node:os';
import type { LoadResult } from './load.js';
import type { StreamStats } from './streams.js';
import type { DeliveryStats } from './subscriber.js';

/** Turning measurements into the tables of a run (written as a dated record of a full run, bench/history/). */

export interface Measurement extends LoadResult {
  scenario: string;
  target: string;
  peakRssMb?: number;
  readyMs: number;
  /** An open-loop scenario: the maximum rate (req/s) whose half it asked for. */
  maxRate?: number;
  /** The webhook scenario: what the subscriber saw. */
  webhooks?: DeliveryStats;
  /** The change-feed scenario: what the open streams saw. */
  feed?: StreamStats;
}

export const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
export const fixed = (value: number | undefined, digits: number) => (value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits));

export interface Row {
  scenario: string;
  target: string;
  runs: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  serverCpu: number | undefined;
  clientCpu: number;
  peakRssMb: number | undefined;
  readyMs: number;
  errors: number;
  non2xx: number;
  /** Throughput as a share of the baseline's in the same scenario (means of the runs), with each run pair's ratio. */
  ratio?: { mean: number; pairs: number[] };
}

export function summarize(measurements: Measurement[], scenarioTitles: Map<string, string>, baseline = 'baseline'): Row[] {
  const rows: Row[] = [];
  for (const [key, title] of scenarioTitles) {
    const ofScenario = measurements.filter((m) => m.scenario === key);
    const targets = [...new Set(ofScenario.map((m) => m.target))];
    const base = ofScenario.filter((m) => m.target === baseline);
    for (const target of targets) {
      const runs = ofScenario.filter((m) => m.target === target);
      const serverCpus = runs.map((m) => m.serverCpu).filter((v): v is number => v !== undefined);
      const rss = runs.map((m) => m.peakRssMb).filter((v): v is number => v !== undefined);
      const row: Row = {
        scenario: title,
        target,
        runs: runs.length,
        reqPerSec: mean(runs.map((m) => m.reqPerSec)),
        p50Ms: mean(runs.map((m) => m.p50Ms)),
        p99Ms: mean(runs.map((m) => m.p99Ms)),
        serverCpu: serverCpus.length ? mean(serverCpus) : undefined,
        clientCpu: Math.max(...runs.map((m) => m.clientCpu)),
        peakRssMb: rss.length ? Math.max(...rss) : undefined,
        readyMs: mean(runs.map((m) => m.readyMs)),
        errors: runs.reduce((a, m) => a + m.errors, 0),
        non2xx: runs.reduce((a, m) => a + m.non2xx, 0),
      };
      if (target !== baseline && base.length > 0) {
        row.ratio = {
          mean: row.reqPerSec / mean(base.map((m) => m.reqPerSec)),
          pairs: runs.map((m, i) => m.reqPerSec / (base[i] ?? base[0]!).reqPerSec),
        };
      }
      rows.push(row);
    }
  }
  return rows;
}

export function table(rows: Row[]): string {
  const lines = [
    '| scenario | server | req/s | ratio to baseline (per run) | p50 ms | p99 ms | server CPU | server CPU µs/req | client CPU (max) | peak RSS MB | start→ready ms | errors | non-2xx |',
    '|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const ratio = r.ratio ? `**${r.ratio.mean.toFixed(2)}** (${r.ratio.pairs.map((p) => p.toFixed(2)).join(', ')})` : '';
    lines.push(
      `| ${r.scenario} | ${r.target} | ${r.reqPerSec.toFixed(0)} | ${ratio} | ${fixed(r.p50Ms, 2)} | ${fixed(r.p99Ms, 2)} | ` +
        `${r.serverCpu === undefined ? '–' : `${(r.serverCpu * 100).toFixed(0)}%`} | ` +
        `${r.serverCpu === undefined ? '–' : ((r.serverCpu / r.reqPerSec) * 1e6).toFixed(0)} | ${(r.clientCpu * 100).toFixed(0)}% | ` +
        `${fixed(r.peakRssMb, 0)} | ${r.readyMs.toFixed(0)} | ${r.errors} | ${r.non2xx} |`,
    );
  }
  return lines.join('\n');
}

/** A scenario's throughput as a share of its baseline's in the same run (means of the runs). */
function baselineRatio(measurements: Measurement[], key: string, target: string): number {
  const service = measurements.filter((m) => m.scenario === key && m.target === target);
  const base = measurements.filter((m) => m.scenario === key && m.target === 'baseline');
  return base.length === 0 || service.length === 0 ? NaN : mean(service.map((m) => m.reqPerSec)) / mean(base.map((m) => m.reqPerSec));
}

/**
 * The webhook scenario's own table: throughput with one subscriber against the same service without one
 * (each as a ratio of its baseline in the same run), and what the subscriber saw of each run.
 */
export function webhookTable(measurements: Measurement[], withHook: string, without: string): string | undefined {
  const runs = measurements.filter((m) => m.scenario === withHook && m.webhooks !== undefined);
  if (runs.length === 0) return undefined;
  const ratio = (key: string, target: string) => baselineRatio(measurements, key, target);
  const lines = [
    '| server | run | req/s | with / without subscriber (ratios to baseline) | delivered | delivery lag p50 ms | lag p99 ms | drained after the load, ms |',
    '|---|---:|---:|---|---:|---:|---:|---:|',
  ];
  runs.forEach((m, i) => {
    const relative = ratio(withHook, m.target) / ratio(without, m.target);
    lines.push(
      `| ${m.target} | ${i + 1} | ${m.reqPerSec.toFixed(0)} | ${fixed(ratio(withHook, m.target), 2)} / ${fixed(ratio(without, m.target), 2)} = **${fixed(relative, 2)}** | ` +
        `${m.webhooks!.delivered} | ${fixed(m.webhooks!.lagP50Ms, 0)} | ${fixed(m.webhooks!.lagP99Ms, 0)} | ${m.webhooks!.drainMs} |`,
    );
  });
  return lines.join('\n');
}

/** Issue 21's targets for deliveries at half the maximum write rate. */
const LAG_P99_TARGET_MS = 1000;
const RSS_TARGET_MB = 200;

/**
 * The open-loop webhook scenario's table: per run, the rate asked for (half the server's maximum with a
 * subscriber), what was acknowledged and delivered, the delivery lag, the drain and the peak RSS, against
 * issue 21's targets.
 */
export function lagTable(measurements: Measurement[], key: string): string | undefined {
  const runs = measurements.filter((m) => m.scenario === key && m.webhooks !== undefined && m.paced !== undefined);
  if (runs.length === 0) return undefined;
  const lines = [
    '| server | run | max POST req/s (1 subscriber) | asked req/s | served req/s | POST p99 ms | acknowledged | delivered (during the load) | lag p50 ms | lag p99 ms | drained after the load, ms | peak RSS MB | lag p99 < 1 s | RSS < 200 MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  const met = (ok: boolean) => (ok ? 'met' : '**not met**');
  runs.forEach((m, i) => {
    const hooks = m.webhooks!;
    lines.push(
      `| ${m.target} | ${i + 1} | ${fixed(m.maxRate, 0)} | ${m.paced!.rate.toFixed(0)} | ${m.reqPerSec.toFixed(0)} | ${fixed(m.p99Ms, 1)} | ` +
        `${m.paced!.acknowledged} | ${hooks.delivered} (${hooks.deliveredDuringLoad}) | ${fixed(hooks.lagP50Ms, 0)} | ${fixed(hooks.lagP99Ms, 0)} | ${hooks.drainMs} | ` +
        `${fixed(m.peakRssMb, 0)} | ${met(hooks.lagP99Ms < LAG_P99_TARGET_MS)} | ${m.peakRssMb === undefined ? '?' : met(m.peakRssMb < RSS_TARGET_MB)} |`,
    );
  });
  return lines.join('\n');
}

/**
 * The change-feed scenario's own table: throughput with the open streams against the same service without
 * them (each as a ratio of its baseline in the same run: the cost to writes), what the streams saw, and the
 * peak RSS with and without them.
 */
export function feedTable(measurements: Measurement[], withStreams: string, without: string): string | undefined {
  const runs = measurements.filter((m) => m.scenario === withStreams && m.feed !== undefined);
  if (runs.length === 0) return undefined;
  const peak = (key: string, target: string) =>
    Math.max(...measurements.filter((m) => m.scenario === key && m.target === target && m.peakRssMb !== undefined).map((m) => m.peakRssMb!));
  const lines = [
    '| server | run | req/s | with / without streams (ratios to baseline) | streams | events per stream | event lag p50 ms | lag p99 ms | drained after the load, ms | peak RSS MB with / without | reader CPU |',
    '|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  runs.forEach((m, i) => {
    const [withRatio, withoutRatio] = [baselineRatio(measurements, withStreams, m.target), baselineRatio(measurements, without, m.target)];
    const events = m.feed!.eventsMin === m.feed!.eventsMax ? `${m.feed!.eventsMin}` : `${m.feed!.eventsMin}–${m.feed!.eventsMax}`;
    lines.push(
      `| ${m.target} | ${i + 1} | ${m.reqPerSec.toFixed(0)} | ${fixed(withRatio, 2)} / ${fixed(withoutRatio, 2)} = **${fixed(withRatio / withoutRatio, 2)}** | ` +
        `${m.feed!.streams} | ${events} | ${fixed(m.feed!.lagP50Ms, 0)} | ${fixed(m.feed!.lagP99Ms, 0)} | ${m.feed!.drainMs} | ` +
        `${fixed(m.peakRssMb, 0)} / ${fixed(peak(without, m.target), 0)} | ${(m.feed!.readerCpu * 100).toFixed(0)}% |`,
    );
  });
  return lines.join('\n');
}

/** Server CPU per request (µs), mean of the runs that have it: all threads, or what `pick` gives (its main thread). */
export const perRequest = (runs: Measurement[], pick: (m: Measurement) => number | undefined = (m) => m.serverCpu) =>
  mean(runs.filter((m) => pick(m) !== undefined).map((m) => (pick(m)! / m.reqPerSec) * 1e6));

/** The service's throughput over another server's in one scenario (means of the runs), with each run pair's ratio. */
export function share(measurements: Measurement[], key: string, of: string): { mean: number; pairs: number[] } | undefined {
  const runs = (target: string) => measurements.filter((m) => m.scenario === key && m.target === target);
  const [service, other] = [runs('service'), runs(of)];
  if (service.length === 0 || other.length === 0) return undefined;
  return {
    mean: mean(service.map((m) => m.reqPerSec)) / mean(other.map((m) => m.reqPerSec)),
    pairs: service.map((m, i) => m.reqPerSec / (other[i] ?? other[0]!).reqPerSec),
  };
}

/**
 * The service against a prototype (the durable one of issue 21, bench/prototype.ts, or the read prototype
 * of issue 29, bench/read-prototype.ts): throughput as a share of the prototype's, beside its share of the
 * baseline, and the server CPU each spends per request, for the scenarios the prototype ran in.
 */
export function prototypeTable(
  measurements: Measurement[],
  scenarios: Array<[key: string, title: string]>,
  prototypeTarget = 'prototype',
): string | undefined {
  const lines = [
    `| scenario | service / ${prototypeTarget} (per run) | service / baseline | ${prototypeTarget} / baseline | service CPU µs/req (its main thread) | ${prototypeTarget} CPU µs/req | CPU ratio |`,
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const [key, title] of scenarios) {
    const of = (target: string) => measurements.filter((m) => m.scenario === key && m.target === target);
    const [service, prototype, base] = [of('service'), of(prototypeTarget), of('baseline')];
    if (service.length === 0 || prototype.length === 0) continue;
    const rate = (runs: Measurement[]) => mean(runs.map((m) => m.reqPerSec));
    const pairs = service.map((m, i) => m.reqPerSec / (prototype[i] ?? prototype[0]!).reqPerSec);
    const [serviceCpu, prototypeCpu] = [perRequest(service), perRequest(prototype)];
    lines.push(
      `| ${title} | **${fixed(rate(service) / rate(prototype), 2)}** (${pairs.map((p) => p.toFixed(2)).join(', ')}) | ` +
        `${fixed(rate(service) / rate(base), 2)} | ${fixed(rate(prototype) / rate(base), 2)} | ${fixed(serviceCpu, 0)} (${fixed(
          perRequest(service, (m) => m.serverMainCpu),
          0,
        )}) | ${fixed(prototypeCpu, 0)} | ${fixed(serviceCpu / prototypeCpu, 2)} |`,
    );
  }
  return lines.length > 2 ? lines.join('\n') : undefined;
}

/**
 * GET by id with writes beside it against the same GETs alone (open loop, the same rate): per server, the
 * GETs' p50 and p99 in each run, the writes served beside them, and p99 with over p99 without (means of the runs).
 */
export function underWritesTable(measurements: Measurement[], withWrites: string, without: string): string | undefined {
  const runs = (key: string, target: string) => measurements.filter((m) => m.scenario === key && m.target === target);
  const targets = [...new Set(measurements.filter((m) => m.scenario === withWrites).map((m) => m.target))];
  if (targets.length === 0) return undefined;
  const latencies = (of: Measurement[]) => of.map((m) => `${fixed(m.p50Ms, 2)} / ${fixed(m.p99Ms, 2)}`).join('; ');
  const lines = [
    '| server | GET p50 / p99 ms alone (per run) | GET p50 / p99 ms with POSTs beside (per run) | GETs served req/s alone / with | POSTs beside req/s (p99 ms) | server CPU µs per request, GETs and POSTs | GET p99 with / without |',
    '|---|---|---|---:|---:|---:|---:|',
  ];
  for (const target of targets) {
    const [alone, under] = [runs(without, target), runs(withWrites, target)];
    const beside = under.filter((m) => m.alongside !== undefined).map((m) => m.alongside!);
    // Every request the server answered in the window, the writes beside the GETs included.
    const cpu = under.filter((m) => m.serverCpu !== undefined).map((m) => (m.serverCpu! / (m.reqPerSec + (m.alongside?.reqPerSec ?? 0))) * 1e6);
    lines.push(
      `| ${target} | ${latencies(alone)} | ${latencies(under)} | ${fixed(mean(alone.map((m) => m.reqPerSec)), 0)} / ${fixed(mean(under.map((m) => m.reqPerSec)), 0)} | ` +
        `${beside.map((a) => `${a.reqPerSec.toFixed(0)} (${fixed(a.p99Ms, 1)})`).join('; ')} | ${cpu.map((us) => us.toFixed(0)).join('; ')} | **${fixed(p99Ratio(measurements, withWrites, without, target), 1)}×** |`,
    );
  }
  return lines.join('\n');
}

/** Mean p99 with writes beside over mean p99 without, for one server. */
export function p99Ratio(measurements: Measurement[], withWrites: string, without: string, target = 'service'): number {
  const p99 = (key: string) => measurements.filter((m) => m.scenario === key && m.target === target).map((m) => m.p99Ms);
  const [under, alone] = [p99(withWrites), p99(without)];
  return under.length === 0 || alone.length === 0 ? NaN : mean(under) / mean(alone);
}

export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Linux ${release()}, Node ${process.version}`;
}

/**
 * Writes a full run's tables as a dated record beside RESULTS.md (history/<date>-<store>-run.md: a second
 * full run of the same day gets -2, -3): RESULTS.md holds today's figures as people summed them up, and
 * points to the run they came from. Answers the file's path.
 */
export function writeRunRecord(historyDir: string, store: 'sqlite' | 'postgres', generated: string): string {
  const date = new Date().toISOString().slice(0, 10);
  mkdirSync(historyDir, { recursive: true });
  let path = join(historyDir, `${date}-${store}-run.md`);
  for (let n = 2; existsSync(path); n++) path = join(historyDir, `${date}-${store}-run-${n}.md`);
  writeFileSync(path, `# Full run of ${date}, ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}\n\nWritten by \`npm run bench\`.\n\n${generated}\n`);
  return path;
}
