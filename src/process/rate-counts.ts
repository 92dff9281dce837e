import { WindowCounts } from '../http/rate-windows.js';

/**
 * The rate limits' counts of every worker, kept by their supervisor (several workers, a store that counts
 * none: SQLite): each worker asks it to count its requests (process/rate-counter.ts), so that a token's
 * budget is the limit, not the limit times the workers, whichever worker the connection reached.
 * The current window and the one before are kept: a request counted as the minute turns, its message
 * crossing the turn, is counted in the window its worker saw.
 */
export class SupervisorRateCounts {
  private windows: WindowCounts[] = [];

  /** Counts one request for each key (a key may repeat) in `window`; answers each one's count, itself included. */
  hit(window: number, keys: readonly string[]): number[] {
    const counts = this.windowOf(window);
    return keys.map((key) => counts.add(key, 1) + 1);
  }

  private windowOf(window: number): WindowCounts {
    let counts = this.windows.find((each) => each.window === window);
    if (counts === undefined) {
      counts = new WindowCounts(window);
      // Windows older than the one before the newest are done with: dropped whole.
      const newest = Math.max(window, ...this.windows.map((each) => each.window));
      this.windows = [...this.windows, counts].filter((each) => each.window >= newest - 1);
    }
    return counts;
  }
}
