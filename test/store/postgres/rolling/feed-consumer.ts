import { EventStreamReader } from '@plant-store/client';
import { sleep, until } from '../../../toolkit.js';
import { connectTo, type Origin, type Transport } from './transport.js';

/**
 * The change feed's consumer of a deploy test: one Server-Sent Events stream through the balancer, which
 * resumes with Last-Event-ID whenever its stream ends (an instance stopping ends its streams cleanly) and
 * counts as failed a stream that breaks, or a reconnection that is not answered 200.
 */

export interface Failure {
  what: string;
  detail: string;
  at: number;
}

export class FeedConsumer {
  /** The ids of the plant events received, in order. */
  readonly ids: string[] = [];
  /** Streams asked for again because the server had not processed the request (transport.ts). */
  get resent(): number {
    return this.client.resent;
  }
  /** Connections made; streams that ended cleanly. */
  connections = 0;
  ended = 0;
  private reader = new EventStreamReader();
  private stopped = false;
  private readonly client: Transport;
  private running: Promise<void> | undefined;
  private abort: AbortController | undefined;

  constructor(
    private readonly to: Origin,
    private readonly failures: Failure[],
  ) {
    this.client = connectTo(to);
  }

  /** Opens the stream and resolves once it has started (its `start` frame, or the first event). */
  async start(): Promise<void> {
    const failed = this.failures.length;
    this.running = this.follow();
    await until(() => this.reader.lastEventId !== '' || this.failures.length > failed, 'the event stream to start', { timeoutMs: 30_000 });
    if (this.failures.length > failed) {
      await this.stop();
      throw new Error(`the event stream did not start: ${this.failures[failed]!.detail}`);
    }
  }

  private async follow(): Promise<void> {
    let tail = '';
    while (!this.stopped) {
      const lastEventId = this.reader.lastEventId;
      this.reader = new EventStreamReader(lastEventId);
      this.abort = new AbortController();
      this.connections++;
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${this.to.token}`, accept: 'text/event-stream' };
        if (lastEventId) headers['last-event-id'] = lastEventId;
        const response = await this.client.stream({ method: 'GET', path: '/events', headers }, this.abort.signal);
        if (response.status !== 200) {
          let text = '';
          for await (const chunk of response.body) text += chunk.toString('utf8');
          this.fail('GET /events (stream)', `${response.status} ${text}`);
          await sleep(100);
          continue;
        }
        tail = '';
        for await (const chunk of response.body) {
          tail = (tail + chunk.toString('latin1')).slice(-120);
          for (const event of this.reader.push(chunk)) {
            if (event.type.startsWith('plant.')) this.ids.push(event.lastEventId);
          }
        }
        this.ended++;
      } catch (error) {
        if (this.stopped) return;
        // The stream's last bytes say how far its end came: the server's last comment, or not even that.
        this.fail('GET /events (stream)', `broken after ${this.ids.length} events: ${describe(error)}; its last bytes: ${JSON.stringify(tail)}`);
        await sleep(100);
      }
    }
  }

  private fail(what: string, detail: string): void {
    this.failures.push({ what, detail, at: Date.now() });
  }

  /** Waits until the last event received is `lastId` (the feed's newest). */
  async caughtUp(lastId: string | undefined, timeoutMs = 60_000): Promise<void> {
    await until(() => lastId === undefined || this.ids.at(-1) === lastId, `the stream to receive the feed's last event ${lastId}`, {
      timeoutMs: timeoutMs,
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort?.abort();
    await this.running;
    await this.client.close();
  }
}

/** An error as a line: its code, message and cause's, which is where undici and fetch say what happened. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: string }).code;
  const cause = error.cause instanceof Error ? ` (cause: ${describe(error.cause)})` : '';
  return `${code ? `${code}: ` : ''}${error.message}${cause}`;
}
