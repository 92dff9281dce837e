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
  /** The service has this many open event streams (GET /events, text/event-stream), read by bench/streams.ts. */
  streams?: number;
  /** Settings added to the service's environment for this scenario. */
  env?: Record<string, string>;
  /** The durable prototype (bench/prototype.ts) runs too: the service is also reported as a share of it. */
  prototype?: boolean;
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
    // The cost of the change feed's live half to writes: every committed POST goes out to 100 streams.
    key: 'post64feed',
    title: 'POST /plants, 64 conn, durable, 100 open event streams',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    streams: 100,
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
