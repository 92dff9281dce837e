import { encodeCursor } from '../src/plants/cursor.js';
import { halfWayByName } from './names.js';
import type { Workload } from './requests.js';

/** The scenarios of issue 4, in the order they run. */

let halfWay: string | undefined;

/** The cursor of the page half-way through the seeded million in name order (sorting a million names takes a second or two: once). */
function halfWayCursor(): string {
  halfWay ??= encodeCursor(halfWayByName(1_000_000), { tags: [], sort: 'name' });
  return halfWay;
}

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
  /** An open-loop run at this many requests per second (latency counted from when each was due). No baseline. */
  rate?: number;
  /** Closed-loop connections of another workload beside the measured one, counted apart (bench/load.ts). */
  alongside?: { connections: number; workload: (idBase: number) => Workload };
}

/**
 * The GETs whose p99 is compared with and without writes beside them: a rate the service serves easily alone,
 * over up to 64 connections, so that GETs as slow as the POSTs beside them (tens of ms) still have one free
 * (with 16, at 30 ms each, the connections were the limit and the backlog, not the service, made the p99).
 */
const PACED_GETS = 500;

/** Searches as people start typing them: the first three letters of words of the seeded names (bench/names.ts). */
const TYPED = ['fer', 'pal', 'alo', 'ros', 'var', 'gol', 'orc', 'mon', 'lav', 'sil', 'bas', 'red'];
/** Searches per second: many people typing at once (each keystroke one request). */
const TYPING_RATE = 100;

export const SCENARIOS: Scenario[] = [
  {
    key: 'post64',
    title: 'POST /plants, 64 conn, durable',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    peers: true,
    prototype: true,
    equalWork: true,
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
    // Issue 21: how late deliveries are, and what they hold in memory, when writes come at half the store's
    // maximum rate (with the subscriber), so the dispatcher has CPU to catch up: target p99 < 1 s, RSS < 200 MB.
    key: 'hookhalf',
    title: 'POST /plants at half the maximum rate (open loop), one webhook subscriber: delivery lag',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    subscriber: true,
    rateOf: { scenario: 'post64hook', share: 0.5 },
  },
  {
    // Deliveries keep up at a fifth of the maximum write rate, the service on one core: lag p99 < 1 s, and
    // (against postfifth, the same rate without a subscriber) each delivery costs at most what a POST does.
    key: 'hookfifth',
    title: 'POST /plants at a fifth of the maximum rate (open loop), one webhook subscriber: delivery lag, one core',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    subscriber: true,
    rateOf: { scenario: 'post64hook', share: 0.2 },
  },
  {
    key: 'postfifth',
    title: 'POST /plants at a fifth of the maximum rate (open loop), no subscriber: the CPU a POST costs there',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    rateOf: { scenario: 'post64hook', share: 0.2 },
  },
  {
    // Two cores for the service (deliveries on a thread of their own can take the second).
    key: 'post64hook2',
    title: 'POST /plants, 64 conn, durable, one webhook subscriber, two cores',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    subscriber: true,
    cpus: '0,1',
  },
  {
    key: 'hookhalf2',
    title: 'POST /plants at half the maximum rate (open loop), one webhook subscriber: delivery lag, two cores',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    subscriber: true,
    rateOf: { scenario: 'post64hook2', share: 0.5 },
    cpus: '0,1',
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
  {
    // What an Idempotency-Key costs: the same POSTs, each with a key of its own (compare with post64 in one run).
    key: 'post64key',
    title: 'POST /plants, 64 conn, durable, each with an Idempotency-Key',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase, keyed: true }),
    prototype: true,
  },
  {
    key: 'post8',
    title: 'POST /plants, 8 conn',
    connections: 8,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    prototype: true,
    equalWork: true,
  },
  {
    key: 'post1',
    title: 'POST /plants, 1 conn',
    connections: 1,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    prototype: true,
    equalWork: true,
  },
  {
    key: 'get100k',
    title: 'GET /plants/{id}, 100k plants',
    connections: 64,
    seeded: 100_000,
    workload: () => ({ kind: 'get', plants: 100_000 }),
    readPrototype: true,
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
    readPrototype: true,
  },
  {
    key: 'page1m',
    title: 'GET /plants?limit=100, 1M plants',
    connections: 64,
    seeded: 1_000_000,
    workload: () => ({ kind: 'page', plants: 1_000_000, limit: 100 }),
    readPrototype: true,
  },
  // Finding plants (issue 19), at 1M plants (bench/names.ts): a page costs the same at any depth, and
  // search and several tags are served by indexes. Each is a share of the baseline's page of 100.
  {
    key: 'name1m',
    title: 'GET /plants?sort=name&limit=100, first page, 1M plants',
    connections: 64,
    seeded: 1_000_000,
    workload: () => ({ kind: 'list', query: 'sort=name&limit=100' }),
  },
  {
    key: 'namedeep1m',
    title: 'GET /plants?sort=name&limit=100, the page half-way (cursor), 1M plants',
    connections: 64,
    seeded: 1_000_000,
    workload: () => ({ kind: 'list', query: `sort=name&limit=100&cursor=${halfWayCursor()}` }),
  },
  {
    key: 'q1m',
    title: 'GET /plants?q=fern&limit=100 from random ids, 1M plants (1 name in 53 holds it)',
    connections: 64,
    seeded: 1_000_000,
    // Pages from anywhere but the last 5% (whose pages would be short).
    workload: () => ({ kind: 'page', plants: 1_000_000, limit: 100, query: 'q=fern', span: 950_000 }),
  },
  // Search as you type: 3-letter q (the first letters of words of the seeded names), a page of 50, in id
  // order and in name order, over 200k plants, at a pace a console full of people typing makes.
  {
    key: 'typeid200k',
    title: `GET /plants?q=<3 letters>&limit=50, id order, at ${TYPING_RATE} req/s (open loop), 200k plants`,
    connections: 16,
    seeded: 200_000,
    workload: () => ({ kind: 'lists', queries: TYPED.map((q) => `q=${q}&limit=50`) }),
    rate: TYPING_RATE,
  },
  {
    key: 'typename200k',
    title: `GET /plants?q=<3 letters>&limit=50&sort=name, name order, at ${TYPING_RATE} req/s (open loop), 200k plants`,
    connections: 16,
    seeded: 200_000,
    workload: () => ({ kind: 'lists', queries: TYPED.map((q) => `q=${q}&limit=50&sort=name`) }),
    rate: TYPING_RATE,
  },
  {
    key: 'tags1m',
    title: 'GET /plants?tag=tropical&tag=succulent&limit=100 from random ids, 1M plants',
    connections: 64,
    seeded: 1_000_000,
    workload: () => ({ kind: 'page', plants: 1_000_000, limit: 100, query: 'tag=tropical&tag=succulent' }),
  },
  {
    key: 'mix',
    title: '80% GET by id / 20% POST, 100k plants',
    connections: 64,
    seeded: 100_000,
    workload: (idBase) => ({ kind: 'mix', plants: 100_000, idBase }),
  },
  // Issue 29: reads keep their latency while writes run (the event loop never waits for an fsync). The same
  // paced GETs alone, then with POSTs at 64 connections beside them; target: p99 with at most 2× p99 without.
  {
    key: 'getpaced',
    title: `GET /plants/{id} at ${PACED_GETS} req/s (open loop), 100k plants, no writes`,
    connections: 64,
    seeded: 100_000,
    workload: () => ({ kind: 'get', plants: 100_000 }),
    rate: PACED_GETS,
  },
  {
    key: 'getunderpost',
    title: `GET /plants/{id} at ${PACED_GETS} req/s (open loop), 100k plants, POSTs at 64 connections beside`,
    connections: 64,
    seeded: 100_000,
    workload: () => ({ kind: 'get', plants: 100_000 }),
    rate: PACED_GETS,
    alongside: { connections: 64, workload: (idBase) => ({ kind: 'post', idBase }) },
  },
];
