import type { Scenario } from './scenario.js';

/** Durable POST /plants on a fresh store, closed loop, at 64, 8 and 1 connections; the service also against the prototypes. */
export const WRITES: Scenario[] = [
  {
    key: 'post64',
    title: 'POST /plants, 64 conn, durable',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    peers: true,
    prototype: true,
    equalWork: true,
    storePrototype: true,
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
    // What an Idempotency-Key costs: the same POSTs, each with a key of its own (compare with post64 in one run).
    key: 'post64key',
    title: 'POST /plants, 64 conn, durable, each with an Idempotency-Key',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase, keyed: true }),
    prototype: true,
  },
];
