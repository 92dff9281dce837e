import type { RateCounter } from '../store/store.js';
import { isOurs, type SupervisorMessage, type WorkerMessage } from './protocol.js';

/** The supervisor's answer to a worker's `rate-hits`. */
type Counted = Extract<SupervisorMessage, { plantStore: 'rate-hits' }>;

/**
 * A worker's rate-limit counts, kept by its supervisor (process/rate-counts.ts) for every worker of the
 * instance: on SQLite with several workers, where the store counts none, so that each token has one
 * budget, not one per worker. The requests of one turn of the event loop are asked in one message, and each
 * waits for its count as a request on PostgreSQL waits for the database's. Used only when the rate limit
 * is on: without it, no request asks anything.
 */
export class SupervisorRateCounter implements RateCounter {
  private requests = 0;
  /** The counts asked and not answered yet, by request number: each key's waiter, in the order asked. */
  private readonly waiting = new Map<number, Array<(count: number) => void>>();
  /** The hits of this turn, not asked yet. */
  private gathered: { window: number; keys: string[]; waiters: Array<(count: number) => void> } | undefined;

  /** `send` sends a message to the supervisor, calling `unsent` when it cannot (the channel has closed). */
  constructor(private readonly send: (message: WorkerMessage, unsent: () => void) => void) {}

  hit(key: string, window: number): Promise<number> {
    return new Promise<number>((resolve) => {
      if (this.gathered?.window !== window) {
        this.ask();
        this.gathered = { window, keys: [], waiters: [] };
        setImmediate(() => this.ask());
      }
      this.gathered.keys.push(key);
      this.gathered.waiters.push(resolve);
    });
  }

  /** The supervisor's counts for a `rate-hits` this worker sent. */
  counted({ request, counts }: Counted): void {
    const waiters = this.waiting.get(request);
    if (waiters === undefined) return;
    this.waiting.delete(request);
    waiters.forEach((waiter, i) => waiter(counts[i] ?? 1));
  }

  /** Asks the supervisor for the counts of the hits gathered. */
  private ask(): void {
    const gathered = this.gathered;
    if (gathered === undefined) return;
    this.gathered = undefined;
    const request = ++this.requests;
    this.waiting.set(request, gathered.waiters);
    // Without a supervisor (it is gone, and this worker with it) each request is counted as the first: the
    // requests in flight are answered rather than left hanging.
    this.send({ plantStore: 'rate-hits', request, window: gathered.window, keys: gathered.keys }, () =>
      this.counted({ request, counts: [], plantStore: 'rate-hits' }),
    );
  }
}

/** The counter of this worker, its answers read from the supervisor's messages. */
export function supervisorRateCounter(): SupervisorRateCounter {
  const counter = new SupervisorRateCounter((message, unsent) => {
    if (!process.send || !process.connected) return unsent();
    process.send(message, undefined, undefined, (error: Error | null) => {
      if (error) unsent();
    });
  });
  process.on('message', (message: unknown) => {
    if (isOurs<SupervisorMessage>(message) && message.plantStore === 'rate-hits') counter.counted(message);
  });
  return counter;
}
