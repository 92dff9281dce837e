import { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import type * as Undici from 'undici';
import { int64AsStrings } from '../json/int64-strings.js';
import { EVENT_INT64_MEMBERS } from '../model/events.js';
import type { DueMessage } from '../store/webhook-store.js';
import { VERSION } from '../version.js';
import { forbiddenAddress, guardedLookup, notPublic, WebhookUrlError, type RefusedAddress, type Resolver } from './network-guard.js';
import { signatureHeader } from './signing.js';
import { RETRY_WAIT_MAX_SECONDS } from '../config/webhooks.js';

/** What one attempt to deliver a message came to. */
export interface AttemptOutcome {
  /** The receiver's HTTP status, or null when no answer came. */
  status: number | null;
  /** Why the attempt failed; null on success (a 2xx). */
  error: string | null;
  /** A 429 or 503's Retry-After, in ms. */
  retryAfterMs?: number;
  /** The address the network guard refused, and why: for the log, never the recorded error. */
  refused?: RefusedAddress;
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  /** Name resolution, for tests; the system's by default. */
  resolver?: Resolver | undefined;
}

/** The longest a receiver's Retry-After defers a message: the longest wait of a retry schedule. */
const RETRY_AFTER_MAX_MS = RETRY_WAIT_MAX_SECONDS * 1000;

/**
 * Retry-After as seconds or an HTTP date, in ms from now, at most RETRY_AFTER_MAX_MS; undefined when
 * absent or unreadable. The receiver's to choose, so bounded: `Retry-After: 99999999999999` made a next
 * attempt no date can hold, which failed the worker at every attempt (and froze the message).
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(text)) return Math.min(Number(text) * 1000, RETRY_AFTER_MAX_MS);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - now), RETRY_AFTER_MAX_MS);
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: unknown };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  const cause = e.cause as { code?: string; message?: string } | undefined;
  const code = e.code ?? cause?.code;
  const message = cause?.message ?? e.message ?? String(error);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/**
 * What ends an attempt that outlasts WEBHOOK_TIMEOUT_MS, as undici's `signal` option (an AbortSignal or an
 * EventEmitter, both documented): an emitter and a timer cleared when the attempt ends. AbortSignal.timeout
 * did the same at 28 µs an attempt against about 2 (its listeners are EventTarget's; its timer stays
 * pending until it fires), a tenth of a delivery's CPU on the main thread.
 */
class AttemptDeadline extends EventEmitter {
  reason: Error | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(ms: number) {
    super();
    this.timer = setTimeout(() => {
      this.reason = Object.assign(new Error(`no answer within ${ms} ms`), { name: 'TimeoutError' });
      this.emit('abort');
    }, ms);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** undici's request function and the connection pool deliveries use. */
interface HttpClient {
  agent: Undici.Agent;
  request: typeof Undici.request;
}

/** An attempt the network guard stopped: its public message is recorded, the address and rule logged. */
function refusal(error: WebhookUrlError): AttemptOutcome {
  return error.refused ? { status: null, error: error.message, refused: error.refused } : { status: null, error: error.message };
}

/**
 * The body an attempt sends, and signs: the outbox's bytes, with the int64 values (the plant's id) as JSON
 * strings when the endpoint asks for them so now (`"int64": "string"`). Made at each attempt from the
 * endpoint's current setting, so a retry or a replay follows it too; one endpoint's choice never changes
 * what another gets.
 */
export function deliveryBody(message: Pick<DueMessage, 'payload' | 'int64'>): string {
  return message.int64 === 'string' ? int64AsStrings(message.payload, EVENT_INT64_MEMBERS) : message.payload;
}

/**
 * Sends messages to receivers: one POST each, signed (Standard Webhooks), bounded by WEBHOOK_TIMEOUT_MS,
 * no redirects followed, connected only to addresses the network guard allowed.
 */
export class Sender {
  /**
   * undici and its connection pool, loaded at the first delivery: a process that sends none (no
   * subscriber yet) is spared its modules and the heap and resident memory they take (measured in
   * bench/RESULTS.md).
   */
  private undici: Promise<HttpClient> | undefined;
  private readonly userAgent = `plant-store/${VERSION}`;

  constructor(private readonly options: SenderOptions) {}

  private client(): Promise<HttpClient> {
    const { timeoutMs, allowPrivateNetworks, resolver } = this.options;
    this.undici ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        connect: { timeout: timeoutMs, ...(allowPrivateNetworks ? {} : { lookup: guardedLookup(resolver) }) },
      }),
    }));
    return this.undici;
  }

  /**
   * Loads undici now rather than at the first delivery: loading it takes 90–110 ms of CPU, which a first
   * delivery under load takes from the requests (process/background.ts calls this before the process is
   * ready, where the store has endpoints). A failure to load is forgotten, so that a delivery tries again.
   */
  async warmUp(): Promise<void> {
    try {
      await this.client();
    } catch (error) {
      this.undici = undefined;
      throw error;
    }
  }

  /** One attempt; `traceHeaders` (tracing on: traceparent) are sent too, so the receiver can join the trace. */
  async send(message: DueMessage, traceHeaders?: Readonly<Record<string, string>>): Promise<AttemptOutcome> {
    const { timeoutMs, allowPrivateNetworks } = this.options;
    const url = new URL(message.url);
    if (!allowPrivateNetworks) {
      // Node does not look up an IP literal, so the guarded lookup never sees it: check it here.
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const rule = isIP(host) === 0 ? undefined : forbiddenAddress(host);
      if (rule !== undefined) return refusal(notPublic(host, { host, address: host, rule }));
    }
    // Loaded before the clock starts: the first delivery of a process would otherwise spend part of its
    // WEBHOOK_TIMEOUT_MS loading undici (130-234 ms of 300 in a review), and one that took longer than the
    // whole time-out would emit its deadline before the request listened for it.
    let client: HttpClient;
    try {
      client = await this.client();
    } catch (error) {
      return { status: null, error: describe(error, timeoutMs) };
    }
    const { agent, request } = client;
    const timestamp = Math.floor(Date.now() / 1000);
    const body = deliveryBody(message);
    const deadline = new AttemptDeadline(timeoutMs);
    try {
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        signal: deadline,
        headers: {
          'content-type': 'application/json',
          'user-agent': this.userAgent,
          'webhook-id': message.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(message.secrets, message.eventId, timestamp, body),
          ...traceHeaders,
        },
        body,
      });
      // The answer's body is not used; reading it frees the connection for the next delivery.
      await response.body.dump();
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { status, error: null };
      const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined;
      const error = status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`;
      return retryAfterMs === undefined ? { status, error } : { status, error, retryAfterMs };
    } catch (error) {
      // The guarded lookup's refusal, as undici passes it on (itself, or as the cause).
      const refused = [error, (error as { cause?: unknown }).cause].find((e) => e instanceof WebhookUrlError);
      return refused ? refusal(refused) : { status: null, error: describe(error, timeoutMs) };
    } finally {
      deadline.clear();
    }
  }

  async close(): Promise<void> {
    if (this.undici) await (await this.undici).agent.close();
  }
}
