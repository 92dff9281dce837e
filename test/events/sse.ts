import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { after } from 'node:test';
import { EventSource, type FetchLike } from 'eventsource';
import type { FastifyInstance } from 'fastify';

/** Helpers of the event stream tests: a real EventSource client (the `eventsource` package) and raw readers. */

export interface Received {
  /** The event's id (lastEventId). */
  id: string;
  type: string;
  data: string;
}

export interface Source {
  source: EventSource;
  received: Received[];
  /** The headers of each connection it made, in order (reconnects send Last-Event-ID). */
  connections: Array<Record<string, string>>;
  /** Every status it was answered with. */
  statuses: number[];
  /** Cuts the connection in use, as a network drop would: the client reconnects by itself. */
  cut(): void;
}

/** Listens on a free loopback port; the app's origin. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/**
 * An EventSource on `url` sending the bearer token (null: none), collecting every event of the three types.
 * `route` may send each connection elsewhere (the nth connection, from 0): to another instance, say.
 */
export function openSource(cleanup: typeof after, url: string, token: string | null, route?: (url: string, connection: number) => string): Source {
  const received: Received[] = [];
  const connections: Array<Record<string, string>> = [];
  const statuses: number[] = [];
  let cutCurrent: (() => void) | undefined;
  const fetchWithToken: FetchLike = async (input, init) => {
    const headers = { ...init.headers, ...(token === null ? {} : { authorization: `Bearer ${token}` }) } as Record<string, string>;
    const target = route ? route(String(input), connections.length) : input;
    connections.push(headers);
    const controller = new AbortController();
    init.signal?.addEventListener('abort', () => controller.abort());
    const response = await fetch(target, { ...init, headers, signal: controller.signal });
    statuses.push(response.status);
    if (response.body === null) return response;
    // The body as the client sees it: a cut breaks it with a network error (an abort would mean "closed on
    // purpose" to the client) and closes the connection, so the server sees the client go.
    const reader = response.body.getReader();
    let broken: ((error: Error) => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        broken = (error) => stream.error(error);
      },
      async pull(stream) {
        try {
          const { done, value } = await reader.read();
          if (done) stream.close();
          else stream.enqueue(value);
        } catch (error) {
          stream.error(error);
        }
      },
    });
    cutCurrent = () => {
      broken?.(new TypeError('network connection lost'));
      controller.abort();
    };
    return { body, url: response.url, status: response.status, redirected: response.redirected, headers: response.headers };
  };
  const source = new EventSource(url, { fetch: fetchWithToken });
  for (const type of ['plant.created', 'plant.updated', 'plant.deleted']) {
    source.addEventListener(type, (event: MessageEvent) => received.push({ id: event.lastEventId, type: event.type, data: event.data as string }));
  }
  cleanup(() => source.close());
  return { source, received, connections, statuses, cut: () => cutCurrent?.() };
}

/** A stream read by hand (fetch): its status and headers, and its text as it arrives. */
export interface RawStream {
  status: number;
  headers: Headers;
  text(): string;
  /** Resolves when the server ends the answer (true), or rejects when the connection breaks. */
  ended: Promise<boolean>;
  abort(): void;
}

export async function rawStream(url: string, headers: Record<string, string>): Promise<RawStream> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  let text = '';
  const ended = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
    return true;
  })();
  ended.catch(() => undefined);
  return { status: response.status, headers: response.headers, text: () => text, ended, abort: () => controller.abort() };
}

/** A client that sends a stream request and then never reads: its socket, paused. */
export async function stalledClient(origin: string, path: string, token: string): Promise<Socket> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  socket.pause();
  return socket;
}
