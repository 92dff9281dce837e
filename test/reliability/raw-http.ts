import { connect } from 'node:net';
import { sleep } from '../toolkit.js';

/**
 * Raw HTTP/1.1 over a socket, for what an in-process inject cannot send: chunked and truncated
 * bodies, broken framing, duplicated headers, bytes that are not UTF-8, slow clients.
 */

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Exchange {
  /** Every answer the server wrote, in order. */
  answers: RawAnswer[];
  /** Everything received, as latin1 text. */
  raw: string;
  /** True when the server closed the connection (false: the client gave up waiting first). */
  closedByServer: boolean;
  /** Milliseconds from the first byte sent to the close. */
  elapsedMs: number;
}

/** Splits what a server wrote into answers (each framed by Content-Length, as this server frames them). */
export function parseAnswers(raw: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) throw new Error(`incomplete answer head: ${JSON.stringify(rest.slice(0, 300))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3}) /.exec(statusLine!);
    if (!match) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyBytes = Buffer.from(rest.slice(end + 4), 'latin1').subarray(0, length);
    answers.push({ status: Number(match[1]), headers, body: bodyBytes.toString('utf8') });
    rest = rest.slice(end + 4 + bodyBytes.length);
  }
  return answers;
}

export interface ExchangeOptions {
  /** Half-close after the last chunk (the client will send nothing more). Default true. */
  end?: boolean;
  /** Pause between chunks. */
  gapMs?: number;
  /** Give up waiting for the server after this long. */
  waitMs?: number;
}

/** Sends the chunks on a fresh connection and collects what comes back until the server closes. */
export function exchange(port: number, chunks: Array<string | Buffer>, options: ExchangeOptions = {}): Promise<Exchange> {
  const { end = true, gapMs = 0, waitMs = 30_000 } = options;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const started = Date.now();
    const received: Buffer[] = [];
    let closedByServer = false;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(giveUp);
      socket.destroy();
      const raw = Buffer.concat(received).toString('latin1');
      resolve({ answers: parseAnswers(raw), raw, closedByServer, elapsedMs: Date.now() - started });
    };
    const giveUp = setTimeout(finish, waitMs);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('end', () => (closedByServer = true));
    socket.on('close', () => {
      closedByServer = true;
      finish();
    });
    void (async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
        if (gapMs > 0) await sleep(gapMs);
      }
      if (end && !socket.destroyed) socket.end();
    })();
  });
}

/** A whole request as text, with a Host and Content-Length (unless the headers given say otherwise). */
export function request(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Buffer {
  const bodyBytes = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const all: Record<string, string> = { host: 'localhost', ...headers };
  if (body !== undefined && all['transfer-encoding'] === undefined) all['content-length'] ??= String(bodyBytes.length);
  const head = `${method} ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), bodyBytes]);
}
