import type { RateCounts } from '../http/rate-limit.js';

/**
 * What the supervisor and its workers tell each other: the worker's role, in an environment variable set
 * as it is forked, then messages over node:cluster's IPC channel. A supervisor lives as long as the
 * service, across reloads, so the workers of a later release talk to the supervisor of an earlier one:
 * this protocol only ever grows (a message or a field one side does not know is ignored), and what a
 * message means never changes. Stopping is asked by signals, not messages (a worker still starting has
 * no listener yet): SIGTERM drains and stops, SIGINT stops at once.
 */

/** The environment variable that carries a worker's role (JSON). */
export const WORKER_ENV = 'PLANT_STORE_WORKER';

/** What a worker is told as it is forked. */
export interface WorkerRole {
  /** Its place among the WEB_CONCURRENCY workers, from 0; a worker that replaces another takes its place. */
  slot: number;
  /** It says what is said once per start: the first token, or that no token can call the API. */
  announce: boolean;
  /** It takes the scheduled backups (BACKUP_DIR): one worker does. */
  backups: boolean;
  /** In a reload: the version of the worker it replaces. */
  replaces?: string;
  /**
   * The supervisor counts the rate limits of its workers (several of them): a worker whose store counts
   * none (SQLite) asks it with `rate-hits`. A supervisor of an earlier release does not say so, and its
   * workers count each its own.
   */
  countsRates?: boolean;
  /**
   * The supervisor relays revocations: a worker that revokes a token says `token-revoked`, and answers the
   * DELETE once the supervisor says every other worker forgot it. An earlier supervisor does not say so.
   */
  relaysRevocations?: boolean;
}

/** A worker's messages to the supervisor. */
export type WorkerMessage =
  /** Serving: listening, every service started. */
  | { plantStore: 'ready'; version: string }
  /** Its start failed, and why (it exits 1 next). */
  | { plantStore: 'failed'; message: string }
  /** Handing over in a reload: its rate limits' counts, for the worker that replaces it. */
  | { plantStore: 'rate-counts'; counts: RateCounts }
  /** Requests to count against the rate limits (role.countsRates): one per key, in `window`, answered with the same `request`. */
  | { plantStore: 'rate-hits'; request: number; window: number; keys: string[] }
  /** A token revoked by this worker: the others are to forget it; answered with the same `request` once they have. */
  | { plantStore: 'token-revoked'; request: number; tokenId: string }
  /** The answer to a `forget-token`: forgotten. */
  | { plantStore: 'token-forgotten'; request: number }
  /**
   * The answer to a `metrics` request: its registry as prom-client's getMetricsAsJSON() gives it (none without
   * METRICS_PORT). The channel carries JSON, where NaN and ±Infinity become null: `nonFinite` says where those
   * were (added later: a supervisor that does not read it sums them as 0, as before). Made by metricsAnswer,
   * read by answeredMetrics.
   */
  | { plantStore: 'metrics'; request: number; metrics: unknown[]; nonFinite?: NonFinite[] };

/** A value JSON cannot carry: which metric (its index in the answer), which of its values, and what it was. */
type NonFinite = [metric: number, value: number, was: 'NaN' | 'Infinity' | '-Infinity'];

/** The supervisor's messages to a worker. */
export type SupervisorMessage =
  /** A new worker serves in this one's place: finish what is in flight and exit (the socket stays open). */
  | { plantStore: 'handover' }
  /** The counts of the worker this one replaced, to add to its own. */
  | { plantStore: 'rate-counts'; counts: RateCounts }
  /** The counts of a worker's `rate-hits`, each key's in the window, its request included, in the order asked. */
  | { plantStore: 'rate-hits'; request: number; counts: number[] }
  /** A token another worker revoked: forget its cached look-ups, then answer `token-forgotten` with the same `request`. */
  | { plantStore: 'forget-token'; request: number; tokenId: string }
  /** The answer to a `token-revoked`: every other worker has forgotten the token (or left, or the wait ended: revocations.ts). */
  | { plantStore: 'token-revoked'; request: number }
  /** A scrape of METRICS_PORT: its metrics, please, answered with the same `request`. */
  | { plantStore: 'metrics'; request: number };

/** The role in the environment; a worker forked without one (by another supervisor) has the smallest. */
export function roleOf(env: NodeJS.ProcessEnv): WorkerRole {
  const fallback: WorkerRole = { slot: 0, announce: false, backups: false };
  try {
    const given = JSON.parse(env[WORKER_ENV] ?? '{}') as Partial<WorkerRole>;
    return {
      slot: typeof given.slot === 'number' ? given.slot : fallback.slot,
      announce: given.announce === true,
      backups: given.backups === true,
      ...(typeof given.replaces === 'string' && { replaces: given.replaces }),
      ...(given.countsRates === true && { countsRates: true }),
      ...(given.relaysRevocations === true && { relaysRevocations: true }),
    };
  } catch {
    return fallback;
  }
}

/** A message of this protocol (others on the channel, prom-client's, are not). */
export function isOurs<T extends { plantStore: string }>(message: unknown): message is T {
  return typeof message === 'object' && message !== null && typeof (message as { plantStore?: unknown }).plantStore === 'string';
}

/** A metric as getMetricsAsJSON() gives it, as far as the values are concerned. */
interface MetricValues {
  values?: { value?: unknown }[];
}

/**
 * A worker's answer to a metrics request, noting every value the channel's JSON would turn into null: NaN
 * is what a gauge reads when it knows nothing (the webhook backlog when the database does not answer),
 * and the sum must say so rather than read 0 ("nothing pending").
 */
export function metricsAnswer(request: number, metrics: unknown[]): WorkerMessage {
  const nonFinite: NonFinite[] = [];
  metrics.forEach((metric, m) =>
    (metric as MetricValues).values?.forEach(({ value }, v) => {
      if (typeof value === 'number' && !Number.isFinite(value)) nonFinite.push([m, v, String(value) as NonFinite[2]]);
    }),
  );
  return { plantStore: 'metrics', request, metrics, ...(nonFinite.length > 0 && { nonFinite }) };
}

/** The metrics of a worker's answer, each value as the worker had it (NaN and ±Infinity put back). */
export function answeredMetrics(answer: Extract<WorkerMessage, { plantStore: 'metrics' }>): unknown[] {
  for (const entry of Array.isArray(answer.nonFinite) ? answer.nonFinite : []) {
    const [m, v, was] = Array.isArray(entry) ? entry : [];
    const value = (answer.metrics[m as number] as MetricValues | undefined)?.values?.[v as number];
    if (value && (was === 'NaN' || was === 'Infinity' || was === '-Infinity')) value.value = Number(was);
  }
  return answer.metrics;
}
