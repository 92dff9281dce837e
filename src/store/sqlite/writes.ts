import type { KeyClaim } from '../idempotency.js';
import type { AnyWrite, KeptOutcome, Outcomes, Write, WriteKind, WriteStore } from '../writes.js';
import { putOp } from './plants.js';
import { createTokenOp } from './tokens.js';
import type { KeyedOp } from './writer/protocol.js';
import type { WriteThread } from './writer/thread.js';

/**
 * The writes a request makes (store/writes.ts) on SQLite: each is the writer thread's own message for it,
 * whose result is its outcome, sent as it is without a key, or inside the thread's keyed message under a
 * claim (writer/idempotency.ts: the look for an earlier outcome, the write and its outcome kept, in the
 * batch's transaction); an import's commit is its session's (imports.ts), on the same messages.
 */
export class SqliteWrites implements WriteStore {
  constructor(private readonly writer: WriteThread) {}

  apply<K extends WriteKind>(write: Write<K>): Promise<Outcomes[K]>;
  apply<K extends WriteKind>(write: Write<K>, claim: KeyClaim): Promise<KeptOutcome<K>>;
  apply(write: AnyWrite, claim?: KeyClaim): Promise<unknown> {
    // The one place the kinds are told apart: each as the thread's message for it.
    switch (write.kind) {
      case 'put':
        return this.send(write, putOp(write.input.plant, write.input), claim);
      case 'import':
        return write.input.session.settle(write.input.createOnly, claim);
      case 'createEndpoint':
        return this.send(write, { kind: 'createEndpoint', endpoint: write.input.endpoint }, claim);
      case 'rotateSecret':
        return this.send(write, { kind: 'rotateSecret', ...write.input }, claim);
      case 'replay':
        return this.send(write, { kind: 'replay', ...write.input, now: Date.now() }, claim);
      case 'createToken':
        return this.send(write, createTokenOp(write.input.token, write.input.secret), claim);
    }
  }

  /** The message as it is, or under the claim. */
  private send(write: AnyWrite, op: KeyedOp, claim: KeyClaim | undefined): Promise<unknown> {
    return claim === undefined ? this.writer.write(op) : this.writer.write({ kind: 'keyed', as: write.kind, claim, write: op });
  }
}
