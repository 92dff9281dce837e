import type { Scenario } from './scenario.js';

/**
 * Writes with one webhook subscriber (a loopback receiver answering 204, bench/subscriber.ts): what a
 * subscriber costs the writes, and how late deliveries are at a share of the maximum write rate. The
 * open-loop ones take their rate from `post64hook` (or `post64hook2`) as each server reached it in the same run.
 */
export const WEBHOOKS: Scenario[] = [
  {
    key: 'post64hook',
    title: 'POST /plants, 64 conn, durable, one webhook subscriber',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    subscriber: true,
  },
  {
    // How late deliveries are, and what they hold in memory, when writes come at half the store's maximum
    // rate (with the subscriber), so the dispatcher has CPU to catch up: target p99 < 1 s, RSS < 200 MB.
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
    // The same at a third of the maximum write rate, still one core: lag p99 < 1 s, and each delivery costs at
    // most what a POST does (against postthird).
    key: 'hookthird',
    title: 'POST /plants at a third of the maximum rate (open loop), one webhook subscriber: delivery lag, one core',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    subscriber: true,
    rateOf: { scenario: 'post64hook', share: 1 / 3 },
  },
  {
    key: 'postthird',
    title: 'POST /plants at a third of the maximum rate (open loop), no subscriber: the CPU a POST costs there',
    connections: 64,
    seeded: 0,
    workload: (idBase) => ({ kind: 'post', idBase }),
    rateOf: { scenario: 'post64hook', share: 1 / 3 },
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
];
