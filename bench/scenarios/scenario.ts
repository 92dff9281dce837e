import type { SeedNames } from '../names.js';
import type { Workload } from '../requests.js';

/**
 * What one scenario of `npm run bench` is. To add one: give it a key and a title in the file of its kind
 * (writes.ts, webhooks.ts, features.ts, reads.ts, search.ts, under-writes.ts, or a new file listed in
 * bench/scenarios.ts), with its workload (bench/requests.ts: add a kind there for a new request shape). It
 * runs in every full run, appears in the generated table, and `--only=<key>` runs it alone. A table of its
 * own goes in bench/sections.ts; a target, in bench/targets.ts.
 */
export interface Scenario {
  key: string;
  title: string;
  connections: number;
  /** Plants in the store before the run (ids 1..n); 0 = a fresh, empty store for every service run. */
  seeded: number;
  /** How the seeded plants are named (bench/names.ts): varied by default. */
  names?: SeedNames;
  /** The workload of one run; idBase gives every write of the whole benchmark a new id. */
  workload: (idBase: number) => Workload;
  /** json-server runs too (with --peers). */
  peers?: boolean;
  /** The service has one webhook subscriber, a loopback receiver answering 204 (bench/subscriber.ts). */
  subscriber?: boolean;
  /** The service has this many open event streams (GET /events, text/event-stream), read by bench/streams.ts. */
  streams?: number;
  /** Settings added to the service's environment for this scenario. */
  env?: Record<string, string>;
  /** The durable prototype (bench/prototype.ts) runs too: the service is also reported as a share of it. */
  prototype?: boolean;
  /** The read prototype (bench/read-prototype.ts, SQLite only) runs too: the service is also reported as a share of it. */
  readPrototype?: boolean;
  /** Tracing on: the service sends its spans to an OTLP/HTTP collector in the runner (bench/otlp-sink.ts). */
  otlp?: boolean;
  /**
   * An open-loop run at a share of the maximum rate of another (closed-loop) scenario, as each server reached
   * it in the same bench run (measured first when that scenario is not part of the run). No baseline: it is
   * about the service's own deliveries.
   */
  rateOf?: { scenario: string; share: number };
  /** The CPUs the servers run on: `0,1` gives them both cores (the load generator shares CPU 1); one core by default. */
  cpus?: string;
  /** The equal-work prototype (../shared/bench/equal-work-prototype.js, SQLite only) runs too: the service is also reported as a share of it. */
  equalWork?: boolean;
  /**
   * The store prototype (bench/store-prototype.ts: node:http in front of the service's own store) runs too:
   * the service is also reported as a share of it, on either store.
   */
  storePrototype?: boolean;
  /** An open-loop run at this many requests per second (latency counted from when each was due). No baseline. */
  rate?: number;
  /** Closed-loop connections of another workload beside the measured one, counted apart (bench/load.ts). */
  alongside?: { connections: number; workload: (idBase: number) => Workload };
}
