import type { Scenario } from './scenario.js';

/** What a feature switched on costs the 64-connection POSTs (compare with post64 in the same run). */
export const FEATURES: Scenario[] = [
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
];
