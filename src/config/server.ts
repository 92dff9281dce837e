import { Type } from '@sinclair/typebox';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { databaseKind } from '../store/database-url.js';
import { commaList, int, oneOf, type Setting } from './setting.js';

/** The HTTP server and the process: where it listens, its limits and time-outs, logs, metrics, load shedding. */

/** PAGE_LINKS's forms (http/cursors.ts). */
export const PAGE_LINK_FORMS = ['signed', '1.0'] as const;
export type PageLinkForm = (typeof PAGE_LINK_FORMS)[number];

/** A DNS name (letters, digits and hyphens between dots), or `*` for any. */
const HOST_NAME = '^(\\*|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)$';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function heapDefaultMb(): number {
  return Math.round((getHeapStatistics().heap_size_limit / 2 ** 20) * 0.8);
}

export const LISTEN_SETTINGS = {
  port: { env: 'PORT', schema: int(0, 65535, 8080, 'TCP port') },
  host: { env: 'HOST', schema: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address to listen on (`0.0.0.0` for all)' }) },
} satisfies Record<string, Setting>;

export const SERVER_SETTINGS = {
  bodyLimit: {
    env: 'BODY_LIMIT',
    schema: int(1024, 16 * 1024 * 1024, 64 * 1024, 'Largest request body in bytes (larger: 413); imports have their own'),
  },
  importBodyLimit: {
    env: 'IMPORT_BODY_LIMIT',
    schema: int(
      1024,
      2 ** 50,
      2 ** 30,
      'Largest bulk import (`POST /plants/import`) in bytes (larger: 413, nothing stored); it is streamed, not held',
    ),
  },
  importTimeoutMs: {
    env: 'IMPORT_TIMEOUT_MS',
    schema: int(1000, 24 * 3_600_000, 600_000, 'A client must send a whole bulk import within this (instead of `REQUEST_TIMEOUT_MS`)'),
  },
  importMaxRowBytes: {
    env: 'IMPORT_MAX_ROW_BYTES',
    schema: int(
      256,
      256 * 1024 * 1024,
      64 * 1024,
      'Largest row of a bulk import in bytes: an NDJSON line, a JSON array element or a CSV record (larger: 400 naming it, nothing stored)',
    ),
  },
  unknownFields: {
    env: 'UNKNOWN_FIELDS',
    schema: oneOf(
      ['ignore', 'refuse'] as const,
      'ignore',
      "A body field a write does not know: `ignore` it and say so in a `Warning: 299` header (the specification's rule: a valid NewPlant is answered 200), or `refuse` the request with 400 naming it (departs from that rule). A request's `Prefer: handling=strict` or `handling=lenient` chooses for itself",
    ),
  },
  pageLinks: {
    env: 'PAGE_LINKS',
    schema: oneOf(
      PAGE_LINK_FORMS,
      'signed',
      'The form of a list\'s `Link: rel="next"`: `signed`, an opaque cursor; `1.0`, what release 1.0 writes and reads (`after=<id>`, GET /plants\'s unsigned cursor), for a fleet being upgraded from 1.0.x: set it on the new instances until none runs 1.0, then remove it (docs/upgrading.md). Both forms are read always',
    ),
  },
  exportIdleTimeoutMs: {
    env: 'EXPORT_IDLE_TIMEOUT_MS',
    schema: int(
      100,
      24 * 3_600_000,
      30_000,
      'An export (`GET /plants` as NDJSON or CSV) whose client takes nothing for this long is ended and logged, giving back its snapshot, its database connection and its export slot',
    ),
  },
  logLevel: {
    env: 'LOG_LEVEL',
    schema: oneOf(
      LOG_LEVELS,
      'info',
      '`fatal` … `trace`, or `silent`; logs go to stdout, one access line per request (JSON lines written in batches every 50 ms; warnings and errors at once)',
    ),
    parse: (text: string) => text.toLowerCase(),
  },
  logFormat: {
    env: 'LOG_FORMAT',
    schema: oneOf(
      ['auto', 'json', 'pretty'] as const,
      'auto',
      '`json` (JSON lines), `pretty` (readable text, pino-pretty), or `auto`: `pretty` when stdout is a terminal and `NODE_ENV` is not `production`, else `json`',
    ),
    parse: (text: string) => text.toLowerCase(),
  },
  metricsPort: {
    env: 'METRICS_PORT',
    // Optional: unset means no metrics at all (no listener, no per-request hook).
    schema: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 65535,
        description:
          'Serve Prometheus metrics (`GET /metrics`) on this TCP port, a listener of its own apart from `PORT` (see [Metrics](metrics-and-tracing.md#metrics)); 0: any free port, named in the log',
      }),
    ),
    docDefault: 'off',
  },
  metricsHost: {
    env: 'METRICS_HOST',
    schema: Type.String({
      minLength: 1,
      default: '127.0.0.1',
      description: 'Address the metrics listener binds; it has no authentication, so keep it on a private network',
    }),
  },
  metricsAllowedHosts: {
    env: 'METRICS_ALLOWED_HOSTS',
    schema: Type.Array(
      Type.String({
        pattern: HOST_NAME,
        patternMeaning: 'must be a host name (metrics.internal) or *',
      }),
      {
        default: [],
        itemName: 'host',
        description:
          'Host names the metrics listener answers to besides IP addresses, `localhost` and `METRICS_HOST` (comma-separated; `*`: any): another `Host` is 421, against DNS rebinding',
      },
    ),
    parse: (text: string) => commaList(text, 'host').map((host) => host.toLowerCase()),
    docDefault: 'none',
  },
  webConcurrency: {
    env: 'WEB_CONCURRENCY',
    schema: int(1, 256, 1, 'Worker processes (see [PostgreSQL](postgresql.md#several-instances))'),
    // PostgreSQL settles every race between processes itself; SQLite's one writer gains nothing from more
    // processes (writes would contend for the file lock instead of sharing group commits).
    defaultFrom: (earlier: Readonly<Record<string, unknown>>) =>
      databaseKind(String(earlier.databaseUrl)) === 'postgres' ? Math.min(availableParallelism(), 256) : 1,
    docDefault: '1 on SQLite, CPUs on PostgreSQL',
  },
  corsOrigins: {
    env: 'CORS_ORIGINS',
    schema: Type.Array(Type.String(), {
      default: [],
      description: 'Comma-separated origins (`https://app.example`) allowed to call from a browser, or `*`',
    }),
    // `*` alone is every origin; otherwise each item must be an origin, the whole list lowercased.
    parse: (text: string) => {
      if (text.trim() === '*') return ['*'];
      return commaList(text, 'origin').map((origin, i) => {
        if (!/^https?:\/\/(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(origin) || !URL.canParse(origin)) {
          throw new Error(`origin ${i + 1} ("${origin}") must look like https://example.com or http://host:port, or the whole setting be *`);
        }
        // As a browser sends it: lower case, and without its scheme's default port (https://app.example:443
        // never matched the https://app.example browsers send).
        return new URL(origin).origin;
      });
    },
    docDefault: 'off',
  },
  console: {
    env: 'CONSOLE',
    schema: Type.Boolean({
      default: true,
      description: 'The web console at `/console` (docs/console.md), where `GET /` leads; `off`: not served, and `GET /` leads to `/docs`',
    }),
    docDefault: '`on`',
  },
  trustProxy: {
    env: 'TRUST_PROXY',
    schema: Type.Union(
      [
        Type.Literal(false),
        Type.Integer({ minimum: 1, maximum: 255 }),
        Type.Array(Type.String({ examples: ['10.0.0.1', '10.0.0.0/8', '2001:db8::/32'] }), { minItems: 1, maxItems: 100, itemName: 'address' }),
      ],
      {
        default: false,
        description:
          "Which proxies to believe about the client address (X-Forwarded-For), for rate limits and logs: `off`; a hop count (`1`: the one proxy in front); or the proxies' addresses and CIDRs, comma-separated (`10.0.0.0/8,::1`)",
      },
    ),
    parse: (text: string) => {
      const word = text.trim().toLowerCase();
      if (['off', 'false', 'no'].includes(word)) return false;
      if (/^\d+$/.test(word)) return Number(word);
      return commaList(text, 'address').map((item, i) => {
        const [address = '', prefix, ...rest] = item.split('/');
        const bits = isIP(address) === 4 ? 32 : isIP(address) === 6 ? 128 : 0;
        if (bits === 0 || rest.length > 0 || (prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= bits))) {
          throw new Error(`address ${i + 1} ("${item}") must be an IPv4 or IPv6 address, or a CIDR such as 10.0.0.0/8`);
        }
        return item;
      });
    },
    docDefault: '`off`',
  },
  headersTimeoutMs: {
    env: 'HEADERS_TIMEOUT_MS',
    schema: int(100, 600_000, 10_000, 'A client must send its headers within this (408); at most `REQUEST_TIMEOUT_MS`'),
  },
  requestTimeoutMs: { env: 'REQUEST_TIMEOUT_MS', schema: int(100, 3_600_000, 30_000, 'A client must send its whole request within this (408)') },
  keepAliveTimeoutMs: { env: 'KEEP_ALIVE_TIMEOUT_MS', schema: int(100, 600_000, 72_000, 'Idle keep-alive connections close after this') },
  maxConnections: { env: 'MAX_CONNECTIONS', schema: int(1, 1_000_000, 1024, 'Open connections beyond this are refused') },
  rateLimitPerMinute: {
    env: 'RATE_LIMIT_PER_MINUTE',
    schema: int(0, 100_000_000, 0, 'Requests per minute per token (per address without one); 429 beyond; 0: off'),
    docDefault: '`0` (off)',
  },
  overloadEventLoopDelayMs: {
    env: 'OVERLOAD_EVENT_LOOP_DELAY_MS',
    schema: int(0, 60_000, 500, 'Shed load (503) while the event loop lags more (0: never)'),
  },
  overloadHeapUsedMb: {
    env: 'OVERLOAD_HEAP_USED_MB',
    schema: int(0, 1_000_000, 0, 'Shed load (503) while the heap in use is larger, in MiB (0: the default)'),
    // Resolved here, so that code reads a number of MiB and knows no special value.
    parse: (text: string) => {
      if (!/^\d+$/.test(text)) throw new Error(`must be a whole number, got "${text}"`);
      return Number(text) || heapDefaultMb();
    },
    defaultFrom: () => heapDefaultMb(),
    docDefault: "80% of V8's limit",
  },
} satisfies Record<string, Setting>;
