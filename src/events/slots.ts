import { HttpError } from '../http/errors.js';
import type { Principal } from '../model/principal.js';

/** Who holds a stream: the token it was opened with and the client address it came from. */
export interface StreamOwner {
  principal: Principal;
  /** The client address as the rate limits count it (http/rate-limit.ts addressKey: an IPv6 address by its /64). */
  address: string;
}

export interface SlotLimits {
  /** EVENTS_MAX_STREAMS */
  maxStreams: number;
  /** EVENTS_MAX_STREAMS_PER_TOKEN */
  perToken: number;
  /** EVENTS_MAX_STREAMS_PER_ADDRESS */
  perAddress: number;
}

/** Seconds a client is asked to wait when its streams, or every stream, are taken: a stream frees a slot only when it ends. */
const RETRY_AFTER = '5';

/** The 429 of an owner that holds its share of the streams (the OpenAPI document's example too). */
export function shareTaken(who: 'token' | 'address', most: number): string {
  return who === 'token'
    ? `this token holds ${most} event streams already, the most one token may (EVENTS_MAX_STREAMS_PER_TOKEN): close one, or retry later`
    : `this client address holds ${most} event streams already, the most one address may (EVENTS_MAX_STREAMS_PER_ADDRESS): close one, or retry later`;
}

/**
 * The stream slots of one process. Every stream holds a connection for as long as it lives, so one token
 * or one client address that could open them all would hold the service: each may hold at most its share
 * (half of them by default), and all together at most EVENTS_MAX_STREAMS, which by default leaves half of
 * MAX_CONNECTIONS to everything else. A refused stream is told when to try again.
 */
export class StreamSlots {
  private taken = 0;
  private readonly byToken = new Map<string, number>();
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly limits: SlotLimits) {}

  /** Takes a slot for this owner, or throws the answer to give instead (429 for its own share, 503 when every slot is taken). */
  take(owner: StreamOwner): void {
    this.check(owner);
    this.taken++;
    this.byToken.set(owner.principal.tokenId, (this.byToken.get(owner.principal.tokenId) ?? 0) + 1);
    this.byAddress.set(owner.address, (this.byAddress.get(owner.address) ?? 0) + 1);
  }

  /** Throws what take would for this owner, taking nothing (the answer to a HEAD of a stream). */
  check(owner: StreamOwner): void {
    const { maxStreams, perToken, perAddress } = this.limits;
    const token = owner.principal.tokenId;
    if ((this.byToken.get(token) ?? 0) >= perToken)
      throw new HttpError('streams_limited', shareTaken('token', perToken), { headers: { 'retry-after': RETRY_AFTER } });
    if ((this.byAddress.get(owner.address) ?? 0) >= perAddress) {
      throw new HttpError('streams_limited', shareTaken('address', perAddress), { headers: { 'retry-after': RETRY_AFTER } });
    }
    if (this.taken >= maxStreams) {
      throw new HttpError('streams_full', `${maxStreams} event streams are open, the most this process serves (EVENTS_MAX_STREAMS): retry later`, {
        headers: { 'retry-after': RETRY_AFTER },
      });
    }
  }

  /** Gives back the slot an owner took. */
  give(owner: StreamOwner): void {
    this.taken--;
    release(this.byToken, owner.principal.tokenId);
    release(this.byAddress, owner.address);
  }
}

/** One fewer for the key; a key with none left is forgotten, so the maps hold only the owners of open streams. */
function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
