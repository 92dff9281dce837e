import { performance } from 'node:perf_hooks';
import { connectionPool } from './load-pool.js';
import { countAnswer, loadResult, measureWindow, noCounts, type LoadOptions, type LoadResult } from './load-loops.js';
import { requestSource } from './requests.js';

/**
 * The open loop: request i is due at start + i / rate and goes out on the first idle connection (one request
 * in flight per connection, up to `connections`); while none is idle, due requests wait in a backlog, and
 * their latency still counts from when they were due (no coordinated omission: a stalled server shows as
 * latency, not as a lower rate asked for).
 */
export async function runPaced(options: LoadOptions, rate: number): Promise<LoadResult> {
  const counts = noCounts();
  const idle: Array<(dueAt: number) => void> = [];
  /** Due times of requests waiting for a connection. */
  const backlog: number[] = [];
  let backlogHead = 0;
  let maxBacklog = 0;
  let scheduled = 0;
  let acknowledged = 0;
  let measuring = false;
  const started = performance.now();

  const pump = (): void => {
    while (backlogHead < backlog.length && idle.length > 0) idle.pop()!(backlog[backlogHead++]!);
    if (backlogHead > 4096 && backlogHead * 2 > backlog.length) {
      backlog.splice(0, backlogHead);
      backlogHead = 0;
    }
  };

  // A connection's latency counts from the time its request was due, not sent.
  const pool = connectionPool(options.port, options.connections, requestSource(options.workload, options.token), {
    ready: (send) => {
      idle.push(send);
      pump();
    },
    answered: (status, latencyMs) => {
      if (status >= 200 && status <= 299) acknowledged++;
      if (measuring) countAnswer(counts, status, latencyMs);
    },
    failed: () => {
      if (measuring) counts.errors++;
    },
  });
  // Every millisecond, the requests that fell due since the last tick join the backlog: request i is due at
  // i / rate, so i + 1 of them are by then (counting i alone sent each request one interval late, and that
  // interval was counted into its latency: 10 ms at 100 req/s, 2 ms at 500).
  const ticker = setInterval(() => {
    const due = Math.floor(((performance.now() - started) * rate) / 1000) + 1;
    for (; scheduled < due; scheduled++) backlog.push(started + (scheduled * 1000) / rate);
    maxBacklog = Math.max(maxBacklog, backlog.length - backlogHead);
    pump();
  }, 1);

  const window = await measureWindow(
    options,
    () => (measuring = true),
    () => {
      measuring = false;
      clearInterval(ticker);
      pool.stop();
    },
  );
  return { ...loadResult(counts, window), paced: { rate, acknowledged, maxBacklog } };
}
