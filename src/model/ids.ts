import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Random bytes from a pool filled 4 KiB at a time: an id is made for every plant change announced, and
 * a call to the CSPRNG costs far more than slicing 10 bytes off a pool (measured in bench/RESULTS.md).
 */
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomBytes10(): Buffer {
  if (used + 10 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += 10;
  return pool.subarray(used - 10, used);
}

/** The last id's time and random part: ids made in the same millisecond count up from it (monotonic ULIDs). */
let lastTime = -1;
const lastRandom = Buffer.alloc(10);

/** Adds one to the 80-bit random part; false when it overflowed (then the time moves on by a millisecond). */
function increment(bytes: Buffer): boolean {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] === 0xff) bytes[i] = 0;
    else {
      bytes[i]!++;
      return true;
    }
  }
  return false;
}

/**
 * A unique, time-ordered id with a prefix saying what it names (`msg_…`, `ep_…`): a ULID, 48 bits of
 * milliseconds then 80 random bits, in Crockford base32. Ids made later sort later: to the millisecond
 * on any instance, and strictly within this process (the same millisecond counts up from the last id).
 * They carry no `.`, which Standard Webhooks forbids in a webhook-id.
 */
export function newId(prefix: string, now = Date.now()): string {
  if (now > lastTime) {
    lastTime = now;
    randomBytes10().copy(lastRandom);
  } else if (!increment(lastRandom)) {
    lastTime++;
  }
  let time = '';
  for (let t = lastTime, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32]! + time;
  let rest = '';
  // 80 bits, 5 at a time.
  let acc = 0;
  let bits = 0;
  for (const byte of lastRandom) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      rest += CROCKFORD[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return `${prefix}_${time}${rest}`;
}
