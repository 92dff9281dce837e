import type { IncomingMessage } from 'node:http';

interface Tracked {
  request: IncomingMessage;
  deadline: number;
}

/**
 * The time a client has to send its whole request (REQUEST_TIMEOUT_MS), per request, so that one kind of
 * request can have longer (an import: IMPORT_TIMEOUT_MS). Node's own requestTimeout is one value for the
 * whole server; this replaces it. Requests are checked on a timer: those received whole are dropped,
 * those past their deadline are handed to `expired` (which answers 408 and closes the connection).
 */
export class RequestDeadlines {
  private tracked = new Set<Tracked>();
  private readonly byRequest = new WeakMap<IncomingMessage, Tracked>();
  /** Requests that arrived in this turn of the event loop, not yet known to be slow. */
  private arriving: Tracked[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly expired: (request: IncomingMessage) => void,
  ) {}

  /**
   * Called for every request as it arrives. Most requests are whole by the end of the turn in which their
   * headers arrived (the body came in the same packets), so only those still incomplete then are tracked:
   * holding every request until the next check (up to a second, tens of thousands of them under load)
   * kept them alive long enough to reach V8's old generation, which grew the RSS and the GC's work
   * (measured in bench/RESULTS.md).
   */
  readonly track = (request: IncomingMessage): void => {
    if (request.complete) return;
    this.arriving.push({ request, deadline: Date.now() + this.timeoutMs });
    if (this.arriving.length === 1) setImmediate(this.settle);
  };

  private readonly settle = (): void => {
    const arriving = this.arriving;
    this.arriving = [];
    for (const entry of arriving) {
      if (entry.request.complete || entry.request.destroyed) continue;
      this.tracked.add(entry);
      this.byRequest.set(entry.request, entry);
    }
  };

  /** Gives a request `ms` from now to arrive whole, instead of the default. */
  extend(request: IncomingMessage, ms: number): void {
    const entry = this.byRequest.get(request) ?? this.arriving.find((arrived) => arrived.request === request);
    if (entry) entry.deadline = Date.now() + ms;
  }

  start(): void {
    // Enforced within a quarter of the timeout (at least every second, at most every 50 ms).
    const every = Math.max(50, Math.min(1000, Math.floor(this.timeoutMs / 4)));
    this.timer = setInterval(() => this.check(Date.now()), every).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  check(now: number): void {
    for (const entry of this.tracked) {
      const { request } = entry;
      if (request.complete || request.destroyed) this.tracked.delete(entry);
      else if (entry.deadline <= now) {
        this.tracked.delete(entry);
        this.expired(request);
      }
    }
  }
}
