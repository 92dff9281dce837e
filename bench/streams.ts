import { get, type ClientRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The open event streams of the change-feed scenario: `count` clients of GET /events (text/event-stream)
 * in the runner's process (idle while the load runs, and kept off the servers' CPU), each reading every
 * frame. Each event's lag is its arrival minus its timestamp (when the change was made, just before its
 * commit), in a histogram of whole milliseconds. When the load ends, one more stream asks where the feed
 * stands (its start frame names the newest event), and the clients are given until every one of them has
 * received that event: the drain time.
 */

export interface StreamStats {
  streams: number;
  /** Events received by the stream that received the fewest, and the most (equal when every stream got every event). */
  eventsMin: number;
  eventsMax: number;
  lagP50Ms: number;
  lagP99Ms: number;
  /** From the end of the load until every stream had the newest event. */
  drainMs: number;
  /** Share of one CPU the readers (the runner's process) used, from opening the streams to the end: on a small machine they compete with the service. */
  readerCpu: number;
}

export interface Streams {
  finish(): Promise<StreamStats>;
}

/** Lags up to a minute, by the millisecond; beyond, in the last bucket. */
const BUCKETS = 60_001;

interface Reader {
  request: ClientRequest;
  events: number;
  lastId: string;
}

function percentile(histogram: Uint32Array, total: number, p: number): number {
  if (total === 0) return NaN;
  const rank = Math.min(total - 1, Math.floor((total * p) / 100));
  let seen = 0;
  for (let ms = 0; ms < histogram.length; ms++) {
    seen += histogram[ms]!;
    if (seen > rank) return ms;
  }
  return histogram.length - 1;
}

function open(port: number, token: string, onText: (text: string) => void, onEnd: () => void = () => undefined): Promise<ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = get(
      { host: '127.0.0.1', port, path: '/events', agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } },
      (response) => {
        if (response.statusCode !== 200) return reject(new Error(`GET /events (stream): ${response.statusCode}`));
        response.setEncoding('utf8').on('data', onText).on('end', onEnd);
        resolve(request);
      },
    );
    request.on('error', reject);
  });
}

/** The newest event's id, from the start frame of a stream without a cursor. */
async function newestId(port: number, token: string): Promise<string> {
  let text = '';
  let found: ((id: string) => void) | undefined;
  const id = new Promise<string>((resolve) => (found = resolve));
  const request = await open(port, token, (chunk) => {
    text += chunk;
    const match = /^id: (\S+)$/m.exec(text);
    if (match) found!(match[1]!);
  });
  try {
    return await id;
  } finally {
    request.destroy();
  }
}

export async function openStreams(port: number, token: string, count: number): Promise<Streams> {
  const cpuStart = process.cpuUsage();
  const opened = performance.now();
  const histogram = new Uint32Array(BUCKETS);
  let total = 0;
  // Every stream gets the same frames: parse each timestamp once.
  const times = new Map<string, number>();
  const readers: Reader[] = [];
  let ended = 0;
  for (let i = 0; i < count; i++) {
    let partial = '';
    const reader: Reader = { request: undefined as unknown as ClientRequest, events: 0, lastId: '' };
    reader.request = await open(
      port,
      token,
      (chunk) => {
        const now = Date.now();
        const text = partial + chunk;
        const end = text.lastIndexOf('\n\n');
        if (end === -1) {
          partial = text;
          return;
        }
        partial = text.slice(end + 2);
        for (let at = text.indexOf('"timestamp":"'); at !== -1 && at < end; at = text.indexOf('"timestamp":"', at + 13)) {
          const stamp = text.slice(at + 13, text.indexOf('"', at + 13));
          let ms = times.get(stamp);
          if (ms === undefined) {
            if (times.size > 10_000) times.clear();
            times.set(stamp, (ms = Date.parse(stamp)));
          }
          histogram[Math.min(BUCKETS - 1, Math.max(0, now - ms))]!++;
          total++;
          reader.events++;
        }
        const lastId = text.lastIndexOf('\nid: ', end);
        const idStart = lastId === -1 ? (text.startsWith('id: ') ? 4 : -1) : lastId + 5;
        if (idStart !== -1) reader.lastId = text.slice(idStart, text.indexOf('\n', idStart));
      },
      () => ended++,
    );
    readers.push(reader);
  }

  return {
    async finish() {
      const loadEnded = performance.now();
      const newest = await newestId(port, token);
      while (readers.some((r) => r.lastId !== newest)) {
        // The service ended a stream (a slow reader past EVENTS_MAX_BACKLOG_BYTES): the figures would not be the scenario's.
        if (ended > 0) throw new Error(`the service ended ${ended} of the ${count} event streams during the load`);
        if (performance.now() - loadEnded > 300_000) throw new Error('the event streams did not catch up within 5 minutes');
        await sleep(20);
      }
      const drainMs = Math.round(performance.now() - loadEnded);
      const cpu = process.cpuUsage(cpuStart);
      const readerCpu = (cpu.user + cpu.system) / 1000 / (performance.now() - opened);
      for (const reader of readers) reader.request.destroy();
      const events = readers.map((r) => r.events);
      return {
        streams: count,
        eventsMin: Math.min(...events),
        eventsMax: Math.max(...events),
        lagP50Ms: percentile(histogram, total, 50),
        lagP99Ms: percentile(histogram, total, 99),
        drainMs,
        readerCpu,
      };
    },
  };
}
