import { importTable, type ImportMeasurement } from './import.js';
import { feedTable, lagTable, prototypeTable, summarize, table, underWritesTable, webhookTable, type Measurement } from './report.js';
import type { Scenario } from './scenarios.js';
import { deliveryCpuTable, targetsTable, typingTable } from './targets.js';

/**
 * The report of a run, section by section, in the order written: the main table, then each table a kind of
 * scenario has. A section whose scenarios did not run is left out. A new table: one entry here.
 */

/** What the sections are made from. */
export interface RunResults {
  measurements: Measurement[];
  /** The scenarios of this run, in their order. */
  scenarios: Scenario[];
  store: 'sqlite' | 'postgres';
  /** The idle-memory table, when idle was measured. */
  idle?: string;
  imports: ImportMeasurement[];
}

interface Section {
  /** The sentence above the table. */
  heading: string;
  /** The table, or undefined when its scenarios did not run. */
  table(run: RunResults): string | undefined;
}

const titles = (run: RunResults, pick: (s: Scenario) => boolean | undefined): Array<[string, string]> =>
  run.scenarios.filter(pick).map((s) => [s.key, s.title]);

const SECTIONS: Section[] = [
  {
    heading: 'The service against the durable prototype (bench/prototype.ts), in the same runs:',
    table: (run) =>
      prototypeTable(
        run.measurements,
        titles(run, (s) => s.prototype),
      ),
  },
  {
    heading:
      "The service against the equal-work prototype (../shared/bench/equal-work-prototype.js: the service's durable work and nothing else), in the same runs:",
    table: (run) =>
      prototypeTable(
        run.measurements,
        titles(run, (s) => s.equalWork),
        'equal-work',
      ),
  },
  {
    heading:
      "The service against the store prototype (bench/store-prototype.ts: node:http in front of the service's own store, nothing else), in the same runs:",
    table: (run) =>
      prototypeTable(
        run.measurements,
        titles(run, (s) => s.storePrototype),
        'store prototype',
      ),
  },
  {
    heading: 'The service against the read prototype (bench/read-prototype.ts), in the same runs:',
    table: (run) =>
      prototypeTable(
        run.measurements,
        titles(run, (s) => s.readPrototype),
        'read prototype',
      ),
  },
  {
    heading:
      'GET by id while POSTs run (open loop: latency from when each GET was due; the same GETs alone, then with 64 POST connections beside; the table above divides the server CPU by the GETs alone, this one by every answer):',
    table: (run) => underWritesTable(run.measurements, 'getunderpost', 'getpaced'),
  },
  {
    heading: 'Webhook scenario (one subscriber, a loopback receiver answering 204):',
    table: (run) => webhookTable(run.measurements, 'post64hook', 'post64'),
  },
  {
    heading: 'Delivery lag at half the maximum rate (open loop, one subscriber; target: lag p99 < 1 s, peak RSS < 200 MB):',
    table: (run) => lagTable(run.measurements, 'hookhalf'),
  },
  {
    heading: 'Delivery lag at a fifth of the maximum rate, one core (target: lag p99 < 1 s):',
    table: (run) => lagTable(run.measurements, 'hookfifth'),
  },
  {
    heading: "What a delivery costs at a fifth of the maximum rate (target: at most a POST's CPU):",
    table: (run) => deliveryCpuTable(run.measurements, 'hookfifth', 'postfifth'),
  },
  {
    heading: 'Delivery lag at a third of the maximum rate, one core (target: lag p99 < 1 s):',
    table: (run) => lagTable(run.measurements, 'hookthird'),
  },
  {
    heading: "What a delivery costs at a third of the maximum rate (target: at most a POST's CPU):",
    table: (run) => deliveryCpuTable(run.measurements, 'hookthird', 'postthird'),
  },
  { heading: 'Delivery lag at half the maximum rate, two cores (target: lag p99 < 1 s):', table: (run) => lagTable(run.measurements, 'hookhalf2') },
  {
    heading: 'Searches as people type them (open loop at 100 a second; in a catalogue of common words, one at a time; target: p99 ≤ 30 ms):',
    table: (run) =>
      typingTable(
        run.measurements,
        titles(run, (s) => s.key.startsWith('type')),
      ),
  },
  {
    heading: "Change-feed scenario (open GET /events streams, read in the runner's process, bench/streams.ts):",
    table: (run) => feedTable(run.measurements, 'post64feed', 'post64'),
  },
  { heading: "Idle memory (bench/idle.ts: the service's VmRSS each second after it is ready, on an empty store):", table: (run) => run.idle },
  {
    heading:
      'Import scenario (POST /plants/import, NDJSON, into an empty store; the bare driver writes the same rows straight into the database, bench/import-reference.ts):',
    table: (run) => (run.imports.length > 0 ? importTable(run.imports, run.store) : undefined),
  },
  { heading: 'Targets of the fifth round in this run:', table: (run) => targetsTable(run.measurements, run.store) },
];

/** The report's text: the main table (every scenario, every server), then each section that has a table. */
export function reportText(run: RunResults): string {
  const rows = summarize(run.measurements, new Map(run.scenarios.map((s) => [s.key, s.title])));
  const parts = rows.length > 0 ? [table(rows)] : [];
  for (const section of SECTIONS) {
    const made = section.table(run);
    if (made) parts.push(`${section.heading}\n\n${made}`);
  }
  return parts.join('\n\n');
}
