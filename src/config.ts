import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { availableParallelism } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { jwksUrl, publicKeyFromPem, secretKey } from './auth/jwt-keys.js';
import { databaseKind, redactUrl } from './store/database-url.js';
import { parsePostgresUrl, type SessionAttrs } from './store/postgres/hosts/url.js';

/**
 * Every setting the service reads, in one table: the environment variable, the schema (type, bounds,
 * default, meaning) and, where the text needs more than a number or a word, a parser. The Config type,
 * the reader below and the README's configuration table are all made from this table, so they cannot
 * drift apart. Settings are read once, at start; a bad value stops the start with a one-line message
 * naming the variable. Code reads the resolved Config only.
 */

type Env = Record<string, string | undefined>;

interface Setting<S extends TSchema = TSchema> {
  env: string;
  /** Type, bounds, `default` and `description` (the README's "Meaning"). */
  schema: S;
  /** Text to value where a plain integer or word will not do; throws an Error whose message says what is wrong. */
  parse?: (text: string) => Static<S>;
  /** A default computed from the settings above it or the machine, when the schema's `default` will not do. */
  defaultFrom?: (earlier: Readonly<Record<string, unknown>>) => Static<S>;
  /** How the README shows a computed default. */
  docDefault?: string;
}

/** RFC 6750 b64token: what a bearer token may contain. */
export const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const int = (minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Integer({ minimum, maximum, default: fallback, description });
const oneOf = <T extends string>(values: readonly T[], fallback: T, description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { default: fallback, description },
  );

/** A postgres:// URL pg can be given host by host, whose target_session_attrs (if any) is one of `allowed`. */
function checkPostgresUrl(text: string, allowed: readonly SessionAttrs[], why: string): void {
  const { sessionAttrs } = parsePostgresUrl(text);
  if (sessionAttrs !== undefined && !allowed.includes(sessionAttrs)) throw new Error(`target_session_attrs=${sessionAttrs} will not do: ${why}`);
}

function commaList<T>(text: string, what: string, check: (item: string, n: number) => T): T[] {
  return text.split(',').map((raw, i) => {
    const item = raw.trim();
    if (item === '') throw new Error(`${what} ${i + 1} is empty (${what}s are separated by commas)`);
    return check(item, i + 1);
  });
}

export const SETTINGS = {
  port: { env: 'PORT', schema: int(0, 65535, 8080, 'TCP port') },
  host: { env: 'HOST', schema: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address to listen on (`0.0.0.0` for all)' }) },
  databaseUrl: {
    env: 'DATABASE_URL',
    schema: Type.String({
      default: 'file:./data/plant-store.db',
      description:
        '`file:/path/to.db` (SQLite, created with its directory on first start) or `postgres://…`, with several hosts for failover: `postgres://u:p@h1:5432,h2:5432/plants?target_session_attrs=read-write` (see High availability)',
    }),
    parse: (text: string) => {
      const kind = databaseKind(text);
      if (kind === undefined) throw new Error(`must be file:/path/to.db or postgres://user:password@host/db, got "${redactUrl(text)}"`);
      if (kind === 'postgres')
        checkPostgresUrl(text, ['read-write', 'primary', 'any'], 'the service writes: use read-write or primary (replicas go in DATABASE_READ_URL)');
      return text;
    },
  },
  databaseReadUrl: {
    env: 'DATABASE_READ_URL',
    schema: Type.String({
      default: '',
      description:
        'PostgreSQL replicas (`postgres://…`, one host or several) that plant lists and exports read from while one is up and at most `READ_REPLICA_MAX_LAG_MS` behind; otherwise they read from the primary',
    }),
    parse: (text: string) => {
      if (databaseKind(text) !== 'postgres')
        throw new Error(`must be postgres://user:password@host/db (one host or several), got "${redactUrl(text)}"`);
      checkPostgresUrl(text, ['any', 'standby', 'read-only', 'primary', 'read-write'], '');
      return text;
    },
    docDefault: 'off',
  },
  readReplicaMaxLagMs: {
    env: 'READ_REPLICA_MAX_LAG_MS',
    schema: int(0, 3_600_000, 5000, 'A replica further behind the primary than this is skipped (lists may be behind by this much)'),
  },
  tokens: {
    env: 'PLANT_STORE_TOKENS',
    schema: Type.Array(Type.String(), { default: [], description: 'Comma-separated static bearer tokens, each with full access' }),
    // The message never repeats a token: it is a secret.
    parse: (text: string) =>
      commaList(text, 'token', (token, n) => {
        if (!BEARER_TOKEN.test(token)) {
          throw new Error(`token ${n} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`);
        }
        return token;
      }),
  },
  jwtJwksUrl: {
    env: 'JWT_JWKS_URL',
    schema: Type.String({
      default: '',
      description:
        "Accept JWTs signed by the keys of this JWKS (an identity provider's `https://…/jwks.json`), fetched and cached; needs `JWT_ISSUER` and `JWT_AUDIENCE` (see JWT)",
    }),
    parse: (text: string) => jwksUrl(text).href,
    docDefault: 'off',
  },
  jwtPublicKey: {
    env: 'JWT_PUBLIC_KEY',
    schema: Type.String({
      default: '',
      description: 'Accept JWTs signed by this key instead: a PEM public key or certificate (RSA, EC or Ed25519; `\\n` for line breaks on one line)',
    }),
    parse: (text: string) => (publicKeyFromPem(text), text),
    docDefault: 'off',
  },
  jwtSecret: {
    env: 'JWT_SECRET',
    schema: Type.String({
      default: '',
      description: 'Accept JWTs signed with HS256 by this shared secret instead (its text as UTF-8, at least 32 bytes)',
    }),
    // The message never repeats the secret.
    parse: (text: string) => (secretKey(text), text),
    docDefault: 'off',
  },
  jwtIssuer: {
    env: 'JWT_ISSUER',
    schema: Type.String({ default: '', description: 'The `iss` every accepted JWT names (required with a JWT key)' }),
    docDefault: 'none',
  },
  jwtAudience: {
    env: 'JWT_AUDIENCE',
    schema: Type.String({ default: '', description: 'The `aud` every accepted JWT names, or includes (required with a JWT key)' }),
    docDefault: 'none',
  },
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
          'Serve Prometheus metrics (`GET /metrics`) on this TCP port, a listener of its own apart from `PORT` (see Metrics); 0: any free port, named in the log',
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
  sqliteSynchronous: {
    env: 'SQLITE_SYNCHRONOUS',
    schema: oneOf(['FULL', 'NORMAL'] as const, 'FULL', '`NORMAL` is faster but a power loss may undo the last commits (never corrupts)'),
    parse: (text: string) => text.toUpperCase(),
  },
  dbTimeoutMs: { env: 'DB_TIMEOUT_MS', schema: int(100, 600_000, 5000, 'Longest a request waits for the database before a 503') },
  writeQueueLimit: {
    env: 'WRITE_QUEUE_LIMIT',
    schema: int(1, 10_000_000, 10_000, 'Writes waiting for the database at most; beyond, a write is answered 503 with `Retry-After` at once'),
  },
  pgPoolSize: { env: 'PG_POOL_SIZE', schema: int(1, 1000, 10, 'Connections per process to PostgreSQL') },
  webConcurrency: {
    env: 'WEB_CONCURRENCY',
    schema: int(1, 256, 1, 'Worker processes (see Scaling out)'),
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
    parse: (text: string) =>
      text.trim() === '*'
        ? ['*']
        : commaList(text, 'origin', (origin, n) => {
            if (!/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/.test(origin)) {
              throw new Error(`origin ${n} ("${origin}") must look like https://example.com or http://host:port, or the whole setting be *`);
            }
            return origin.toLowerCase();
          }),
    docDefault: 'off',
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
    parse: (text: string) => wholeNumber(text) || heapDefaultMb(),
    defaultFrom: () => heapDefaultMb(),
    docDefault: "80% of V8's limit",
  },
  webhookTimeoutMs: {
    env: 'WEBHOOK_TIMEOUT_MS',
    schema: int(100, 600_000, 15_000, 'A webhook delivery succeeds on a 2xx answer within this; otherwise it is retried'),
  },
  webhookRetrySchedule: {
    env: 'WEBHOOK_RETRY_SCHEDULE',
    schema: Type.Array(Type.Number({ minimum: 0, maximum: 30 * 86_400 }), {
      minItems: 1,
      maxItems: 100,
      default: [5, 300, 1800, 7200, 18_000, 36_000, 36_000],
      description:
        'Seconds to wait before each retry of a failed webhook delivery, comma-separated (`5,300`: three attempts in all); each wait is lengthened by up to 10% at random',
    }),
    parse: (text: string) =>
      commaList(text, 'wait', (item, n) => {
        if (!/^\d+(\.\d+)?$/.test(item)) throw new Error(`wait ${n} ("${item}") must be a number of seconds`);
        const seconds = Number(item);
        if (seconds > 30 * 86_400) throw new Error(`wait ${n} (${item} s) is longer than 30 days`);
        return seconds;
      }),
    docDefault: '`5,300,1800,7200,18000,36000,36000` (about three days)',
  },
  webhookDisableAfterHours: {
    env: 'WEBHOOK_DISABLE_AFTER_HOURS',
    schema: Type.Number({
      exclusiveMinimum: 0,
      maximum: 100_000,
      default: 120,
      description: 'An endpoint whose deliveries kept failing, with no success, for this many hours is disabled',
    }),
  },
  webhookRetentionDays: {
    env: 'WEBHOOK_RETENTION_DAYS',
    schema: Type.Number({
      exclusiveMinimum: 0,
      maximum: 100_000,
      default: 30,
      description: 'Delivered and failed webhook messages are deleted after this many days',
    }),
  },
  webhookConcurrency: { env: 'WEBHOOK_CONCURRENCY', schema: int(1, 10_000, 16, 'Webhook deliveries in flight per process at most') },
  webhookAllowPrivateNetworks: {
    env: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
    schema: Type.Boolean({
      default: false,
      description:
        '`true` lets webhook URLs reach loopback, private and link-local addresses (development and tests only: it opens server-side request forgery)',
    }),
  },
} satisfies Record<string, Setting>;

type Settings = typeof SETTINGS;

export const ConfigSchema = Type.Object(
  Object.fromEntries(Object.entries(SETTINGS).map(([key, setting]) => [key, setting.schema])) as { [K in keyof Settings]: Settings[K]['schema'] },
) as TObject<{ [K in keyof Settings]: Settings[K]['schema'] }>;
export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super(`${setting}: ${problem}`);
    this.name = 'ConfigError';
  }
}

interface SchemaShape {
  type?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  exclusiveMinimum?: number;
  anyOf?: Array<{ const?: unknown }>;
  default?: unknown;
  description?: string;
}

/** The value a setting's text spells, by its schema: an integer in bounds, one of the listed words, a string. */
function read(setting: Setting, text: string): unknown {
  const schema = setting.schema as SchemaShape;
  const value: unknown = setting.parse ? setting.parse(text) : byType(schema.type, text);
  if (schema.type === 'integer' || schema.type === 'number') {
    const n = value as number;
    const low = schema.minimum ?? schema.exclusiveMinimum!;
    if (n < low || n > schema.maximum! || n === schema.exclusiveMinimum) {
      throw new Error(
        `must be ${schema.exclusiveMinimum === undefined ? 'between' : 'more than'} ${low} and ${schema.exclusiveMinimum === undefined ? '' : 'at most '}${schema.maximum}, got ${text}`,
      );
    }
  } else if (schema.anyOf) {
    const allowed = schema.anyOf.map((s) => s.const);
    if (!allowed.includes(value)) throw new Error(`must be one of ${allowed.join(', ')}, got "${text}"`);
  } else if (schema.type === 'string' && (value as string).length < (schema.minLength ?? 0)) {
    throw new Error('must not be empty');
  }
  return value;
}

function heapDefaultMb(): number {
  return Math.round((getHeapStatistics().heap_size_limit / 2 ** 20) * 0.8);
}

function byType(type: string | undefined, text: string): unknown {
  if (type === 'integer') return wholeNumber(text);
  if (type === 'number') {
    if (!/^\d+(\.\d+)?$/.test(text)) throw new Error(`must be a number, got "${text}"`);
    return Number(text);
  }
  if (type === 'boolean') {
    const word = text.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(word)) return true;
    if (['false', '0', 'no', 'off'].includes(word)) return false;
    throw new Error(`must be true or false, got "${text}"`);
  }
  return text;
}

function wholeNumber(text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`must be a whole number, got "${text}"`);
  return Number(text);
}

/** Rules between settings, checked once each has its value. */
function checkRelations(config: Config): void {
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS', `must not exceed REQUEST_TIMEOUT_MS (${config.requestTimeoutMs}), got ${config.headersTimeoutMs}`);
  }
  if (config.databaseReadUrl !== '' && databaseKind(config.databaseUrl) !== 'postgres') {
    throw new ConfigError('DATABASE_READ_URL', 'reads from PostgreSQL replicas, so DATABASE_URL must be postgres:// too');
  }
  checkJwtSettings(config);
  if (config.metricsPort !== undefined && config.metricsPort !== 0 && config.metricsPort === config.port) {
    throw new ConfigError('METRICS_PORT', `must differ from PORT (${config.port}): metrics have a listener of their own`);
  }
}

/** One key source for JWTs at most, and with it the issuer and the audience the tokens must name. */
function checkJwtSettings(config: Config): void {
  const keys = (['jwtJwksUrl', 'jwtPublicKey', 'jwtSecret'] as const).filter((key) => config[key] !== '').map((key) => SETTINGS[key].env);
  const [first, second] = keys;
  if (second !== undefined) {
    throw new ConfigError(first!, `only one of JWT_JWKS_URL, JWT_PUBLIC_KEY and JWT_SECRET may be set, got ${keys.join(' and ')}`);
  }
  const claims = [
    ['JWT_ISSUER', config.jwtIssuer, 'issuer (iss)'],
    ['JWT_AUDIENCE', config.jwtAudience, 'audience (aud)'],
  ] as const;
  for (const [env, value, what] of claims) {
    if (first !== undefined && value === '') throw new ConfigError(env, `is required with ${first}: the ${what} that accepted JWTs name`);
    if (first === undefined && value !== '') {
      throw new ConfigError(env, 'is set but JWTs are off: set JWT_JWKS_URL, JWT_PUBLIC_KEY or JWT_SECRET to verify them with');
    }
  }
}

/** The settings from the environment; an empty value counts as unset. */
export function loadConfig(env: Env = process.env): Config {
  const resolved: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(SETTINGS) as Array<[string, Setting]>) {
    const text = env[setting.env];
    if (text === undefined || text.trim() === '') {
      const fallback = setting.defaultFrom ? setting.defaultFrom(resolved) : (setting.schema as SchemaShape).default;
      // A fresh copy: defaults such as [] must not be shared between configurations.
      resolved[key] = Array.isArray(fallback) ? [...(fallback as unknown[])] : fallback;
      continue;
    }
    try {
      resolved[key] = read(setting, text);
    } catch (error) {
      throw new ConfigError(setting.env, error instanceof Error ? error.message : String(error));
    }
  }
  const config = resolved as Config;
  checkRelations(config);
  return config;
}

/** The README's configuration table, made from the settings table (test/config-docs.test.ts keeps the README in step). */
export function configTable(): string {
  const rows = (Object.values(SETTINGS) as Setting[]).map((setting) => {
    const schema = setting.schema as SchemaShape;
    const fallback = setting.docDefault ?? (Array.isArray(schema.default) && schema.default.length === 0 ? 'none' : `\`${String(schema.default)}\``);
    return `| \`${setting.env}\` | ${fallback} | ${schema.description ?? ''} |`;
  });
  return ['| Setting | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
