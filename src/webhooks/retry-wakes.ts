/**
 * Wake-ups at the retries this process schedules, so that a retry due in a few seconds is claimed when it
 * falls due, not at the dispatcher's next poll: a poll a second apart made a 1 s wait 2 s and a 5 s wait
 * up to 6, where each wait is lengthened by a tenth at most (docs/webhooks.md). Only the retries due within
 * HORIZON_MS get one (for a longer wait a poll's second late is less than a tenth of it), and one timer
 * serves every retry due within the same STEP_MS: a burst of failures sets a few timers, not one each.
 */
const HORIZON_MS = 10_000;
const STEP_MS = 20;

export class RetryWakes {
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(private readonly wake: () => void) {}

  /** Wakes the dispatcher when a retry due at `time` (epoch ms) falls due, if that is soon. */
  at(time: number, now = Date.now()): void {
    if (time - now > HORIZON_MS) return;
    const step = Math.ceil(time / STEP_MS) * STEP_MS;
    if (this.timers.has(step)) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(step);
        this.wake();
      },
      Math.max(0, step - now),
    );
    this.timers.set(step, timer.unref());
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
