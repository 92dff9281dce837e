/**
 * The requests a load run sends, built before the clock starts: templates whose only per-request work
 * is copying a buffer and writing a new id into it, so the client stays far from its own CPU limit.
 */

/** What a load run sends. Every write carries an id never sent before in the whole benchmark. */
export type Workload =
  /** `keyed`: each POST also carries an Idempotency-Key never sent before (`k` and the plant's id). */
  | { kind: 'post'; idBase: number; keyed?: boolean }
  | { kind: 'get'; plants: number }
  /** Full pages from random keyset points (after=); `query` adds filters (q, tag), `span` bounds the points. */
  | { kind: 'page'; plants: number; limit: number; query?: string; span?: number }
  /** The same request every time (GET /plants with these parameters: a first page, or one from a cursor). */
  | { kind: 'list'; query: string }
  /** These GET /plants query strings, each in turn (several searches as people type them). */
  | { kind: 'lists'; queries: readonly string[] }
  | { kind: 'mix'; plants: number; idBase: number };

/** Ids of written plants are 13 decimal digits, so every POST body has the same length. */
export const WRITE_ID_DIGITS = 13;
export const WRITE_ID_MIN = 10 ** (WRITE_ID_DIGITS - 1);

const NAME = 'Monstera deliciosa';
const TAG = 'tropical';

/** A POST's bytes, and where its id goes: in the body, and in the Idempotency-Key header when keyed. */
function postTemplate(token: string, keyed: boolean): { buffer: Buffer; idOffsets: number[] } {
  const placeholder = '#'.repeat(WRITE_ID_DIGITS);
  const body = `{"id":${placeholder},"name":"${NAME}","tag":"${TAG}"}`;
  const head =
    `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
    (keyed ? `Idempotency-Key: k${placeholder}\r\n` : '') +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const text = head + body;
  const idOffsets = [text.lastIndexOf(placeholder)];
  if (keyed) idOffsets.push(text.indexOf(placeholder));
  return { buffer: Buffer.from(text, 'latin1'), idOffsets };
}

function getRequest(path: string, token: string): Buffer {
  return Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`, 'latin1');
}

/** A deterministic pseudo-random sequence (xorshift), so every run of a scenario asks for the same things. */
function randomInts(count: number, bound: number, seed: number): number[] {
  let x = seed | 0 || 1;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.push((x >>> 0) % bound);
  }
  return out;
}

const PREBUILT = 8192;

/** A function giving the next request to send; cheap enough to call tens of thousands of times a second. */
export function requestSource(workload: Workload, token: string): () => Buffer {
  switch (workload.kind) {
    case 'post': {
      const { buffer, idOffsets } = postTemplate(token, workload.keyed === true);
      let next = workload.idBase;
      return () => {
        const request = Buffer.allocUnsafe(buffer.length);
        buffer.copy(request);
        const id = String(next++);
        for (const offset of idOffsets) request.write(id, offset, 'latin1');
        return request;
      };
    }
    case 'get': {
      // Seeded plants have ids 1..plants.
      const requests = randomInts(PREBUILT, workload.plants, 7).map((i) => getRequest(`/plants/${i + 1}`, token));
      let i = 0;
      return () => requests[i++ & (PREBUILT - 1)]!;
    }
    case 'page': {
      // Keyset paging from random points of the store, each page a full one.
      const span = workload.span ?? Math.max(1, workload.plants - workload.limit);
      const path = `/plants?${workload.query ? `${workload.query}&` : ''}limit=${workload.limit}`;
      const requests = randomInts(PREBUILT, span, 11).map((after) => getRequest(after === 0 ? path : `${path}&after=${after}`, token));
      let i = 0;
      return () => requests[i++ & (PREBUILT - 1)]!;
    }
    case 'list': {
      const request = getRequest(`/plants?${workload.query}`, token);
      return () => request;
    }
    case 'lists': {
      const requests = workload.queries.map((query) => getRequest(`/plants?${query}`, token));
      let i = 0;
      return () => requests[i++ % requests.length]!;
    }
    case 'mix': {
      // 80% reads, 20% writes: every fifth request is a POST of a new plant.
      const read = requestSource({ kind: 'get', plants: workload.plants }, token);
      const write = requestSource({ kind: 'post', idBase: workload.idBase }, token);
      let i = 0;
      return () => (++i % 5 === 0 ? write() : read());
    }
  }
}
