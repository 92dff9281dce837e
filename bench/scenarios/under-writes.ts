import type { Scenario } from './scenario.js';

/**
 * The GETs whose p99 is compared with and without writes beside them: a rate the service serves easily alone,
 * over up to 64 connections, so that GETs as slow as the POSTs beside them (tens of ms) still have one free
 * (with 16, at 30 ms each, the connections were the limit and the backlog, not the service, made the p99).
 */
const PACED_GETS = 500;

/**
 * Reads and writes together: a closed-loop mix, then reads keeping their latency while writes run (the event
 * loop never waits for an fsync): the same paced GETs alone, then with POSTs at 64 connections beside them
 * (from a load generator process of their own, bench/load-beside.ts, so that the GETs' latency holds none of
 * the client's work for the POSTs); target: p99 with at most 2× p99 without.
 */
export const UNDER_WRITES: Scenario[] = [
  {
    key: 'mix',
    title: '80% GET by id / 20% POST, 100k plants',
    connections: 64,
    seeded: 100_000,
    workload: (idBase) => ({ kind: 'mix', plants: 100_000, idBase }),
  },
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
