import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { Client } from 'undici';

/**
 * One client connection to a balancer, as the deploy tests' clients make them: HTTP/1.1 with keep-alive
 * (undici), or HTTP/2 (node:http2) for nginx, whose reloads close the connections it has idle. An HTTP/1.1
 * client cannot know whether a request sent on a connection closed under it was processed; an HTTP/2
 * client can: the server's GOAWAY names the last stream it processes, and a stream above it, or refused
 * (REFUSED_STREAM), was not processed and is sent again on a new connection, as HTTP/2 allows for any
 * method (RFC 9113, 8.7) and browsers and curl do. Those are counted in `resent`, never failures.
 */

export interface Origin {
  origin: string;
  /** The certificate the balancer presents, and its name. */
  ca: string;
  servername: string;
  token: string;
  protocol: 'http/1.1' | 'h2';
}

export interface Call {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export type Headers = Record<string, string | string[] | undefined>;

export interface Answer {
  status: number;
  text: string;
  headers: Headers;
}

export interface Streamed {
  status: number;
  body: AsyncIterable<Buffer>;
}

export interface Transport {
  request(call: Call): Promise<Answer>;
  /** An answer whose body is read as it comes (an event stream); `signal` ends it. */
  stream(call: Call, signal: AbortSignal): Promise<Streamed>;
  close(): Promise<void>;
  /** Requests sent again because the server said it had not processed them (HTTP/2 only). */
  readonly resent: number;
}

export function connectTo(to: Origin): Transport {
  return to.protocol === 'h2' ? new Http2(to) : new Http1(to);
}

class Http1 implements Transport {
  readonly resent = 0;
  private readonly client: Client;

  constructor(to: Origin) {
    this.client = new Client(to.origin, { connect: { ca: to.ca, servername: to.servername } });
  }

  async request(call: Call): Promise<Answer> {
    const response = await this.client.request({ method: call.method, path: call.path, headers: call.headers, body: call.body });
    return { status: response.statusCode, text: await response.body.text(), headers: response.headers };
  }

  async stream(call: Call, signal: AbortSignal): Promise<Streamed> {
    const response = await this.client.request({ method: call.method, path: call.path, headers: call.headers, signal });
    return { status: response.statusCode, body: response.body as AsyncIterable<Buffer> };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** A stream the server did not process: above the last one its GOAWAY names, or refused. */
class Unprocessed extends Error {}

/** The session a stream was sent on, and the last stream its GOAWAY said it processes (Infinity: none said). */
interface Session {
  session: ClientHttp2Session;
  lastStreamId: number;
}

/** How many times one request is sent at most (each time on a new connection). */
const SENDS = 4;

class Http2 implements Transport {
  resent = 0;
  private current: Session | undefined;

  constructor(private readonly to: Origin) {}

  /** The connection to send on: a new one once the server has said it is going away, or it closed. */
  private session(): Session {
    const current = this.current;
    if (current && current.lastStreamId === Infinity && !current.session.closed && !current.session.destroyed) return current;
    const session = connect(this.to.origin, { ca: this.to.ca, servername: this.to.servername });
    const made: Session = { session, lastStreamId: Infinity };
    session.on('goaway', (_code: number, lastStreamId: number) => (made.lastStreamId = lastStreamId));
    // A session's error also errors its streams, which say it to their callers.
    session.on('error', () => undefined);
    this.current = made;
    return made;
  }

  /** Sends the call, again on a new connection while the server says it did not process it. */
  private async sent<T>(call: Call, read: (stream: ClientHttp2Stream, headers: IncomingHttpHeaders) => Promise<T>): Promise<T> {
    for (let send = 1; ; send++) {
      try {
        return await this.once(call, read);
      } catch (error) {
        if (!(error instanceof Unprocessed) || send === SENDS) throw error instanceof Unprocessed ? (error.cause as Error) : error;
        this.resent++;
      }
    }
  }

  private once<T>(call: Call, read: (stream: ClientHttp2Stream, headers: IncomingHttpHeaders) => Promise<T>): Promise<T> {
    const at = this.session();
    return new Promise<T>((resolve, reject) => {
      const headers: Record<string, string> = { ':method': call.method, ':path': call.path, ...call.headers };
      if (call.body !== undefined) headers['content-length'] = String(Buffer.byteLength(call.body));
      let stream: ClientHttp2Stream;
      try {
        stream = at.session.request(headers, { endStream: call.body === undefined });
      } catch (error) {
        // The session closed between the check and the request: nothing was sent.
        reject(new Unprocessed('not sent', { cause: error }));
        return;
      }
      let answered = false;
      stream.once('response', (responseHeaders) => {
        answered = true;
        read(stream, responseHeaders).then(resolve, reject);
      });
      stream.once('error', (error: Error) => {
        if (answered) return;
        const unprocessed = stream.rstCode === constants.NGHTTP2_REFUSED_STREAM || (stream.id !== undefined && stream.id > at.lastStreamId);
        reject(unprocessed ? new Unprocessed('not processed', { cause: error }) : error);
      });
      stream.once('close', () => {
        if (answered) return;
        const unprocessed = stream.rstCode === constants.NGHTTP2_REFUSED_STREAM || stream.id === undefined || stream.id > at.lastStreamId;
        reject(
          unprocessed
            ? new Unprocessed('not processed', { cause: new Error(`stream closed (${stream.rstCode})`) })
            : new Error(`stream closed before an answer (${stream.rstCode})`),
        );
      });
      if (call.body !== undefined) stream.end(call.body);
    });
  }

  request(call: Call): Promise<Answer> {
    return this.sent(call, async (stream, headers) => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
      return { status: Number(headers[':status']), text: Buffer.concat(chunks).toString('utf8'), headers: plain(headers) };
    });
  }

  stream(call: Call, signal: AbortSignal): Promise<Streamed> {
    return this.sent(call, (stream, headers) => {
      signal.addEventListener('abort', () => stream.close(constants.NGHTTP2_CANCEL));
      return Promise.resolve({ status: Number(headers[':status']), body: stream as AsyncIterable<Buffer> });
    });
  }

  async close(): Promise<void> {
    const session = this.current?.session;
    if (!session || session.closed || session.destroyed) return;
    await new Promise<void>((resolve) => session.close(() => resolve()));
  }
}

function plain(headers: IncomingHttpHeaders): Headers {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith(':')));
}
