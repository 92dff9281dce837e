import type { Workload } from './requests.js';

/** The scenarios of issue 4, in the order they run. */

export interface Scenario {
  key: string;
  title: string;
  connections: number;
  /** Plants in the store before the run (ids 1..n); 0 = a fresh, empty store for every service run. */
  seeded: number;
  /** The workload of one run; idBase gives every write of the whole benchmark a new id. */
  workload: (idBase: number) => Workload;
  /** json-server runs too (with --peers). */
  peers?: boolean;
  /** The service has one webhook subscriber, a loopback receiver answering 204 (bench/subscriber.ts). */
  subscriber?: boolean;
  /** Settings added to the service's environment for this scenario. */
  env?: Record<string, string>;
  /** The durable prototype (bench/prototype.ts) runs too: the service is also reported as a share of it. */
  prototype?: boolean;
  /** Tracing on: the service sends its spans to an OTLP/HTTP collector in the runner (bench/otlp-sink.ts). */
  otlp?: boolean;
}

export const SCENARIOS: Scenario[] = [
  {
    key: 'post64',
    title: 'POST /plants, 64 conn, durable',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    peers: true,
    prototype: true,
  },
  {
    key: 'post64hook',
    title: 'POST /plants, 64 conn, durable, one webhook subscriber',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    subscriber: true,
  },
  {
    // The cost of Prometheus metrics: post64 with them on (the request hook, commit observations, default
    // process metrics); nobody scrapes, as between two scrapes of a real Prometheus.
    key: 'post64metrics',
    title: 'POST /plants, 64 conn, durable, metrics on',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    env: { METRICS_PORT: '0' },
  },
  {
    // The cost of OpenTelemetry tracing: post64 with every request traced (the default sampler records
    // all), spans exported in protobuf to a collector in the runner's process.
    key: 'post64traced',
    title: 'POST /plants, 64 conn, durable, tracing on',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    otlp: true,
  },
  { key: 'post8', title: 'POST /plants, 8 conn', connections: 8, seeded: 0, workload: (idBase) => ({ kind: 'post', idBase }), prototype: true },
  { key: 'post1', title: 'POST /plants, 1 conn', connections: 1, seeded: 0, workload: (idBase) => ({ kind: 'post', idBase }), prototype: true },
  {
    key: 'get100k',
    title: 'GET /plants/{id}, 100k plants',
    connections: 64,
    seeded: 100_000,
    workload: () => ({ kind: 'get', plants: 100_000 }),
  },
  {
    key: 'get100ktraced',
    title: 'GET /plants/{id}, 100k plants, tracing on',
    connections: 64,
    seeded: 100_000,
    workload: () => ({ kind: 'get', plants: 100_000 }),
    otlp: true,
  },
  {
    key: 'page1k',
    title: 'GET /plants?limit=100, 1k plants',
    connections: 64,
    seeded: 1_000,
    workload: () => ({ kind: 'page', plants: 1_000, limit: 100 }),
  },
  {
    key: 'page1m',
    title: 'GET /plants?limit=100, 1M plants',
    connections: 64,
    seeded: 1_000_000,
    workload: () => ({ kind: 'page', plants: 1_000_000, limit: 100 }),
  },
  {
    key: 'mix',
    title: '80% GET by id / 20% POST, 100k plants',
    connections: 64,
    seeded: 100_000,
    workload: (idBase) => ({ kind: 'mix', plants: 100_000, idBase }),
  },
];
