import type { Scenario } from './scenario.js';

/** Reads of a seeded store, closed loop: GET by id and pages of 100 in id order, the service also against the read prototype. */
export const READS: Scenario[] = [
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
];
