import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where each microsecond of a request goes (issue 21): the V8 CPU profiles of a `npm run bench -- --cpu-prof`
 * run, cut to each run's measured window, every sample given to a stage of the request path, divided by the
 * requests answered in that window. Usage: node dist/bench/profile.js --stages <profile folder>.
 *
 * A sample goes to the innermost frame of its stack that names a stage (RULES, in order), so a native leaf
 * (writev, JSON.parse, postMessage) counts where our or the framework's code called it. The profiler samples
 * wall time: a thread that another process or thread on its CPU preempts keeps its current frame, so the
 * main thread's busy time is a little more than its CPU time (bench/run.ts pins both threads to one CPU).
 */

/** What bench/run.ts writes beside the profiles of one service run (run-<pid>.json). */
export interface ProfiledRun {
  pid: number;
  scenario: string;
  target: string;
  /** The load generator's measured window, on the monotonic clock V8's profiles use, in µs. */
  windowUs: [start: number, end: number];
  requests: number;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

type Rule = [stage: string, matches: (functionName: string, url: string) => boolean];

const inFile =
  (...parts: string[]) =>
  (_name: string, url: string) =>
    parts.some((part) => url.includes(part));
const named =
  (file: string, names: RegExp) =>
  (name: string, url: string): boolean =>
    url.includes(file) && names.test(name);

/** The stages of the request path, most specific first. */
const RULES: Rule[] = [
  ['garbage collection', (name) => name === '(garbage collector)'],
  ['access log', inFile('/src/logging/', '/node_modules/pino/', '/node_modules/sonic-boom/')],
  ['metrics', inFile('/src/metrics/', '/node_modules/prom-client/')],
  ['tracing', inFile('/src/tracing/', '/node_modules/@opentelemetry/')],
  [
    'deadlines, overload, rate limit',
    inFile('/src/http/deadlines.', '/src/http/overload.', '/src/http/rate-limit.', '/src/http/request-pressure.', '/src/http/transport.'),
  ],
  ['auth', inFile('/src/http/auth.', '/src/auth/')],
  ['validation', inFile('/src/http/validation', '/src/http/strict-query.', '/node_modules/ajv/', '/node_modules/fastify/lib/validation.')],
  ['body parse (JSON)', inFile('/src/http/json.', '/src/http/json-depth.', '/client/dist/json.', '/node_modules/fastify/lib/content-type-parser.')],
  ['routing', inFile('/node_modules/find-my-way/')],
  ['store hand-off and its answer', inFile('/src/store/', '/node_modules/better-sqlite3/', 'node:internal/worker')],
  ['serialization', inFile('/node_modules/fast-json-stringify/', '/src/model/plant.', '/node_modules/fastify/lib/error-serializer')],
  [
    'headers',
    (name, url) =>
      url.includes('/src/http/security.') ||
      url.includes('/src/http/conditional.') ||
      named('/node_modules/fastify/lib/reply.', /^Reply\.(header|headers|getHeader|hasHeader|removeHeader|code|status)$/)(name, url) ||
      named(
        'node:_http_outgoing',
        /^(_storeHeader|setHeader|setHeaders|getHeader|removeHeader|hasHeader|processHeader|storeHeader|validateHeader.*|_implicitHeader)$/,
      )(name, url) ||
      named('node:_http_server', /^(writeHead|_writeHead|_implicitHeader)$/)(name, url),
  ],
  // A page's cursor: made for its Link (and checked when asked with one), and the Link itself (issue 29).
  ['list cursor and Link', inFile('/src/plants/cursor.', '/src/http/paging.')],
  ['handler', inFile('/src/plants/', '/src/webhooks/', '/src/system/')],
  [
    'writing the answer',
    (name, url) =>
      url.startsWith('node:_http_outgoing') ||
      named('node:internal/stream_base_commons', /^(writeGeneric|writevGeneric|handleWriteReq|afterWriteDispatched|onWriteComplete)$/)(name, url) ||
      named('node:_http_server', /^(resOnFinish|onFinish|.*[Ff]inish.*)$/)(name, url),
  ],
  [
    'accept and parse (HTTP)',
    inFile('node:_http_server', 'node:_http_common', 'node:_http_incoming', 'node:net', 'node:internal/stream_base_commons'),
  ],
  [
    'framework (hooks, request and reply objects)',
    inFile('/node_modules/fastify/', '/node_modules/avvio/', '/node_modules/@fastify/', '/node_modules/toad-cache/', '/src/app.'),
  ],
];

const OTHER = 'other (event loop, timers, native)';
/** The order of the table's rows. */
const STAGES = [...RULES.map(([stage]) => stage), OTHER];

/** Each node's stage: its own frame's, else its caller's (memoized, from the root down). */
function stagesOf(profile: CpuProfile): Map<number, string | undefined> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const stage = new Map<number, string | undefined>();
  const visit = (id: number, inherited: string | undefined) => {
    const { functionName, url } = byId.get(id)!.callFrame;
    const own = RULES.find(([, matches]) => matches(functionName, url))?.[0];
    const value = functionName === '(idle)' ? undefined : (own ?? inherited ?? OTHER);
    stage.set(id, value);
    for (const child of byId.get(id)!.children ?? []) pending.push([child, own ?? inherited]);
  };
  const pending: Array<[number, string | undefined]> = [[profile.nodes[0]!.id, undefined]];
  while (pending.length > 0) visit(...pending.pop()!);
  return stage;
}

/** µs of samples by stage within the window (idle left out); `leaves` also gathers them by stage and leaf function. */
function timeByStage(profile: CpuProfile, [start, end]: [number, number], leaves?: Map<string, number>): Map<string, number> {
  const stage = stagesOf(profile);
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    // A sample stands for the time until the next one.
    const lasts = profile.timeDeltas[i + 1] ?? 0;
    if (at < start || at > end) continue;
    const name = stage.get(profile.samples[i]!);
    if (name === undefined) continue;
    totals.set(name, (totals.get(name) ?? 0) + lasts);
    if (leaves) {
      const { functionName, url } = frames.get(profile.samples[i]!)!;
      const leaf = `${name}: ${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist)\//, '')}`;
      leaves.set(leaf, (leaves.get(leaf) ?? 0) + lasts);
    }
  }
  return totals;
}

interface StageRow {
  scenario: string;
  target: string;
  runs: number;
  /** Main thread µs per request by stage (mean of the runs). */
  main: Map<string, number>;
  /** The writer thread's busy µs per request (its commits, fsync waits included). */
  writer: number;
}

/** The runs of a profile folder, each scenario and target's µs per request by stage averaged over its runs. */
export function stageRows(dir: string, leaves?: Map<string, number>): StageRow[] {
  const files = readdirSync(dir);
  const groups = new Map<string, { scenario: string; target: string; runs: Array<{ main: Map<string, number>; writer: number }> }>();
  for (const file of files.filter((name) => /^run-\d+\.json$/.test(name))) {
    const run = JSON.parse(readFileSync(join(dir, file), 'utf8')) as ProfiledRun;
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread.
    const profiles = files.filter((name) => name.endsWith('.cpuprofile') && name.split('.')[3] === String(run.pid));
    const main = new Map<string, number>();
    let writer = 0;
    for (const name of profiles) {
      const isMain = name.split('.')[4] === '0';
      const times = timeByStage(JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile, run.windowUs, isMain ? leaves : undefined);
      if (isMain) for (const [stage, us] of times) main.set(stage, us / run.requests);
      else for (const us of times.values()) writer += us / run.requests;
    }
    const key = `${run.scenario} ${run.target}`;
    const group = groups.get(key) ?? { scenario: run.scenario, target: run.target, runs: [] };
    group.runs.push({ main, writer });
    groups.set(key, group);
  }
  return [...groups.values()].map(({ scenario, target, runs }) => {
    const mean = (pick: (run: (typeof runs)[number]) => number) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
    return {
      scenario,
      target,
      runs: runs.length,
      main: new Map(STAGES.map((stage) => [stage, mean((run) => run.main.get(stage) ?? 0)])),
      writer: mean((run) => run.writer),
    };
  });
}

/** The stage table: one column per scenario and target, µs per request and the share of the main thread's busy time. */
export function stageTable(rows: StageRow[]): string {
  const header = rows.map((row) => `${row.scenario} ${row.target} (${row.runs} runs)`);
  const lines = [`| stage, µs per request | ${header.join(' | ')} |`, `|---|${rows.map(() => '---:').join('|')}|`];
  const total = (row: StageRow) => [...row.main.values()].reduce((a, b) => a + b, 0);
  // The share of the main thread's busy time beside the µs: runs on a loaded machine inflate every stage alike.
  const cell = (row: StageRow, stage: string) => `${row.main.get(stage)!.toFixed(1)} (${((row.main.get(stage)! / total(row)) * 100).toFixed(0)}%)`;
  for (const stage of STAGES) lines.push(`| ${stage} | ${rows.map((row) => cell(row, stage)).join(' | ')} |`);
  lines.push(`| **main thread, all stages** | ${rows.map((row) => `**${total(row).toFixed(1)}**`).join(' | ')} |`);
  lines.push(`| SQLite writer thread (commits; fsync waits included) | ${rows.map((row) => row.writer.toFixed(1)).join(' | ')} |`);
  return lines.join('\n');
}
