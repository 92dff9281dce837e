import { fixed, mean, p99Ratio, perRequest, share, type Measurement } from './report.js';

/**
 * The targets of the fifth performance round, as one run of the bench measures them (the scenarios not
 * part of the run are left out), and the tables only they need: the CPU a webhook delivery costs, and
 * searches as people type them. The same figures are in the tables of report.ts; this says which targets
 * they meet.
 */

/** What a target measures, the figure of this run (undefined: not measured here), and whether it holds. */
interface TargetRow {
  measure: string;
  target: string;
  figure: { text: string; met: boolean } | undefined;
}

const runsOf = (measurements: Measurement[], key: string, target = 'service') =>
  measurements.filter((m) => m.scenario === key && m.target === target);

/** The service's server CPU per request over another server's in one scenario (means of the runs). */
function cpuRatio(measurements: Measurement[], key: string, of: string): number {
  return perRequest(runsOf(measurements, key)) / perRequest(runsOf(measurements, key, of));
}

/**
 * A share of another server as a figure: its mean and run pairs, met when at least `floor`; with the CPU per
 * request against that server's beside it, steadier than req/s when other work takes the servers' CPU unevenly.
 */
function shareFigure(measurements: Measurement[], key: string, of: string, floor: number): TargetRow['figure'] {
  const ratio = share(measurements, key, of);
  return (
    ratio && {
      text: `**${ratio.mean.toFixed(2)}** (${ratio.pairs.map((p) => p.toFixed(2)).join(', ')}); CPU ${fixed(cpuRatio(measurements, key, of), 2)}× its`,
      met: ratio.mean >= floor,
    }
  );
}

/**
 * The CPU one delivery costs, against a POST's at the same rate: the service's CPU per second with a
 * subscriber over the same paced POSTs without one, over the deliveries per second (one per POST, as long
 * as they keep up, which the lag shows); `undefined` when either scenario was not run.
 */
export function deliveryCpu(measurements: Measurement[], withHook: string, without: string, target = 'service') {
  const [hook, plain] = [runsOf(measurements, withHook, target), runsOf(measurements, without, target)];
  const cpu = (runs: Measurement[]) => mean(runs.filter((m) => m.serverCpu !== undefined).map((m) => m.serverCpu!));
  const rate = (runs: Measurement[]) => mean(runs.map((m) => m.reqPerSec));
  if (hook.length === 0 || plain.length === 0) return undefined;
  const postUs = (cpu(plain) / rate(plain)) * 1e6;
  const deliveryUs = ((cpu(hook) - cpu(plain) * (rate(hook) / rate(plain))) / rate(hook)) * 1e6;
  return { postUs, deliveryUs, lagP99Ms: mean(hook.map((m) => m.webhooks?.lagP99Ms ?? NaN)) };
}

export function deliveryCpuTable(measurements: Measurement[], withHook: string, without: string): string | undefined {
  const targets = [...new Set(measurements.filter((m) => m.scenario === withHook).map((m) => m.target))];
  const lines = [
    '| server | POST CPU µs (no subscriber) | delivery CPU µs (with one, less the POSTs) | delivery / POST | lag p99 ms |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const target of targets) {
    const figures = deliveryCpu(measurements, withHook, without, target);
    if (figures === undefined) continue;
    lines.push(
      `| ${target} | ${fixed(figures.postUs, 0)} | ${fixed(figures.deliveryUs, 0)} | ${fixed(figures.deliveryUs / figures.postUs, 2)} | ${fixed(figures.lagP99Ms, 0)} |`,
    );
  }
  return lines.length > 2 ? lines.join('\n') : undefined;
}

/** Searches as people type them (open loop): each run's latency, per server. */
export function typingTable(measurements: Measurement[], keys: Array<[key: string, title: string]>): string | undefined {
  const lines = [
    '| search | server | req/s asked / served | p50 ms (per run) | p99 ms (per run) | server CPU µs/search |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const [key, title] of keys) {
    for (const target of [...new Set(measurements.filter((m) => m.scenario === key).map((m) => m.target))]) {
      const runs = runsOf(measurements, key, target);
      lines.push(
        `| ${title} | ${target} | ${fixed(runs[0]?.paced?.rate, 0)} / ${fixed(mean(runs.map((m) => m.reqPerSec)), 0)} | ` +
          `${runs.map((m) => fixed(m.p50Ms, 1)).join(', ')} | ${runs.map((m) => fixed(m.p99Ms, 1)).join(', ')} | ${fixed(perRequest(runs), 0)} |`,
      );
    }
  }
  return lines.length > 2 ? lines.join('\n') : undefined;
}

/** The worst p99 of a scenario's service runs, as a figure against a ceiling in ms. */
function p99Figure(measurements: Measurement[], key: string, ceilingMs: number): TargetRow['figure'] {
  const runs = runsOf(measurements, key);
  if (runs.length === 0) return undefined;
  const worst = Math.max(...runs.map((m) => m.p99Ms));
  return { text: `**${worst.toFixed(1)} ms** (${runs.map((m) => m.p99Ms.toFixed(1)).join(', ')})`, met: worst <= ceilingMs };
}

function lagFigure(measurements: Measurement[], key: string): TargetRow['figure'] {
  const runs = runsOf(measurements, key).filter((m) => m.webhooks !== undefined);
  if (runs.length === 0) return undefined;
  const worst = Math.max(...runs.map((m) => m.webhooks!.lagP99Ms));
  return { text: `**${worst.toFixed(0)} ms** (${runs.map((m) => m.webhooks!.lagP99Ms.toFixed(0)).join(', ')})`, met: worst < 1000 };
}

/** The two webhook targets at one share of the maximum write rate, one core: lag p99, and a delivery's CPU against a POST's. */
function deliveryRows(measurements: Measurement[], share: string, withHook: string, without: string): TargetRow[] {
  const delivery = deliveryCpu(measurements, withHook, without);
  return [
    { measure: `webhook lag p99 at ${share} of the maximum write rate, one core`, target: '< 1 s', figure: lagFigure(measurements, withHook) },
    {
      measure: `CPU per delivery against a POST's at ${share} of the maximum write rate, one core`,
      target: '≤ 1×',
      figure: delivery && {
        text: `**${(delivery.deliveryUs / delivery.postUs).toFixed(2)}×** (${delivery.deliveryUs.toFixed(0)} against ${delivery.postUs.toFixed(0)} µs)`,
        met: delivery.deliveryUs <= delivery.postUs,
      },
    },
  ];
}

export function targetsTable(measurements: Measurement[], store: 'sqlite' | 'postgres'): string | undefined {
  const underWrites = p99Ratio(measurements, 'getunderpost', 'getpaced');
  const rows: TargetRow[] = [
    ...deliveryRows(measurements, 'a fifth', 'hookfifth', 'postfifth'),
    ...deliveryRows(measurements, 'a third', 'hookthird', 'postthird'),
    { measure: 'webhook lag p99 at half the maximum write rate, two cores', target: '< 1 s', figure: lagFigure(measurements, 'hookhalf2') },
    ...(store === 'sqlite'
      ? [
          {
            measure: 'durable POST, 64 connections, share of the equal-work prototype',
            target: '≥ 0.85',
            figure: shareFigure(measurements, 'post64', 'equal-work', 0.85),
          },
          {
            measure: 'POST at 8 connections, share of the equal-work prototype',
            target: '≥ 0.85',
            figure: shareFigure(measurements, 'post8', 'equal-work', 0.85),
          },
          {
            measure: 'POST at 1 connection, share of the equal-work prototype',
            target: '≥ 0.85',
            figure: shareFigure(measurements, 'post1', 'equal-work', 0.85),
          },
          {
            measure: 'GET by id (100k plants), share of the raw GET server',
            target: '≥ 0.7',
            figure: shareFigure(measurements, 'get100k', 'baseline', 0.7),
          },
        ]
      : [
          { measure: 'POST, 64 connections, share of its prototype', target: '≥ 0.6', figure: shareFigure(measurements, 'post64', 'prototype', 0.6) },
          {
            measure: 'GET by id (100k plants), share of the raw GET server',
            target: '≥ 0.65',
            figure: shareFigure(measurements, 'get100k', 'baseline', 0.65),
          },
        ]),
    { measure: '3-letter q, a page of 50, id order, 200k plants: p99', target: '≤ 30 ms', figure: p99Figure(measurements, 'typeid200k', 30) },
    { measure: '3-letter q, a page of 50, name order, 200k plants: p99', target: '≤ 30 ms', figure: p99Figure(measurements, 'typename200k', 30) },
    ...(['3', '2'] as const).flatMap((length) =>
      (['id', 'name'] as const).map((sort) => ({
        measure: `${length}-letter q held by ${length === '3' ? '10%' : '30%'} of 200k names (common words), a page of 50, ${sort} order: p99`,
        target: '≤ 30 ms',
        figure: p99Figure(measurements, `typeword${length}${sort}`, 30),
      })),
    ),
    {
      measure: 'GET by id p99 while POSTs run at 64 connections, against its p99 without writes',
      target: '≤ 2×',
      figure: Number.isNaN(underWrites) ? undefined : { text: `**${underWrites.toFixed(2)}×**`, met: underWrites <= 2 },
    },
  ];
  const measured = rows.filter((row) => row.figure !== undefined);
  if (measured.length === 0) return undefined;
  return [
    "| measure | this run (per run); the service's CPU per request against the other server's | target | met? |",
    '|---|---|---|---|',
    ...measured.map((row) => `| ${row.measure} | ${row.figure!.text} | ${row.target} | ${row.figure!.met ? 'met' : '**not met**'} |`),
  ].join('\n');
}
