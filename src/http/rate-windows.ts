/**
 * One fixed window's rate-limit counts, by key: what a process's limiter keeps (http/rate-limit.ts), and the
 * supervisor for its workers on SQLite (process/rate-counts.ts). It imports nothing, so that the supervisor
 * counts with it without loading any serving code.
 */

/**
 * Client addresses tracked per window at most; beyond, new addresses share one bucket, so that a flood of
 * addresses cannot grow memory. Tokens never share: each has its own budget whatever the addresses did
 * (a token key costs a verified credential, so their number is what the operator or the identity
 * provider issued, not what a flood can make up).
 */
export const MAX_ADDRESS_KEYS = 100_000;
const OVERFLOW = '(overflow)';
export const TOKEN_PREFIX = 'token:';

/** The length of a window: counts start again at every whole minute. */
export const WINDOW_MS = 60_000;

export class WindowCounts {
  private readonly counts = new Map<string, number>();
  /** The address keys among `counts`. */
  private addresses = 0;

  /** `window`: its number, epoch milliseconds / WINDOW_MS. */
  constructor(readonly window: number) {}

  /** Adds `count` requests for `key` (to the shared bucket for a new address past the cap); answers the count before them. */
  add(key: string, count: number): number {
    let bucket = key;
    let before = this.counts.get(key);
    if (before === undefined) {
      bucket = this.bucketOf(key);
      before = this.counts.get(bucket) ?? 0;
    }
    this.counts.set(bucket, before + count);
    return before;
  }

  entries(): Array<[key: string, count: number]> {
    return [...this.counts];
  }

  /** Where a key not counted yet in this window counts: its own bucket, or the shared one once addresses are too many. */
  private bucketOf(key: string): string {
    if (key.startsWith(TOKEN_PREFIX)) return key;
    if (this.addresses >= MAX_ADDRESS_KEYS) return OVERFLOW;
    this.addresses++;
    return key;
  }
}
