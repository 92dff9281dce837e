import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { availableParallelism } from 'node:os';

/**
 * Every setting the service reads, read once at start from the environment. The type is derived
 * from the schema; a bad value stops the start with a one-line message naming the setting.
 */
export const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  databaseUrl: Type.String({ minLength: 1 }),
  /** Static bearer tokens with full access. */
  tokens: Type.Array(Type.String()),
  bodyLimit: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024 }),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  sqliteSynchronous: Type.Union([Type.Literal('FULL'), Type.Literal('NORMAL')]),
  /** Longest a request may wait for the database before it is answered 503. */
  dbTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000 }),
  pgPoolSize: Type.Integer({ minimum: 1, maximum: 1000 }),
  /** Processes serving (node:cluster workers); 1 serves from the process itself. */
  webConcurrency: Type.Integer({ minimum: 1, maximum: 256 }),
  /** Origins a browser may call the API from (CORS); empty: CORS off; ['*']: any origin. */
  corsOrigins: Type.Array(Type.String()),
  /** A client must have sent all request headers within this time, else the connection is closed (408). */
  headersTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000 }),
  /** A client must have sent the whole request (headers and body) within this time, else 408. */
  requestTimeoutMs: Type.Integer({ minimum: 100, maximum: 3_600_000 }),
  /** An idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000 }),
  /** Open connections beyond this many are refused at once. */
  maxConnections: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
  /** Requests per minute per token (per client address without one); 0: no rate limit. */
  rateLimitPerMinute: Type.Integer({ minimum: 0, maximum: 100_000_000 }),
  /** Shed load (503) while the event loop lags more than this; 0: never on this account. */
  overloadEventLoopDelayMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
  /** Shed load (503) while the JS heap in use exceeds this many MiB; 0: 80% of V8's heap limit. */
  overloadHeapUsedMb: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
});
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

export const DEFAULT_DATABASE_URL = 'file:./data/plant-store.db';

/** RFC 6750 b64token: what a bearer token may contain. */
export const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = (name === 'LOG_LEVEL' ? raw.toLowerCase() : raw.toUpperCase()) as T;
  if (!allowed.includes(value)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return value;
}

function databaseUrl(env: Env): string {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return DEFAULT_DATABASE_URL;
  if (/^file:.+/.test(raw) || /^postgres(ql)?:\/\/.+/.test(raw)) return raw;
  throw new ConfigError('DATABASE_URL', `must be file:/path/to.db or postgres://user:password@host/db, got "${redactUrl(raw)}"`);
}

function tokens(env: Env): string[] {
  const raw = env.PLANT_STORE_TOKENS;
  if (raw === undefined || raw.trim() === '') return [];
  return raw.split(',').map((token, i) => {
    const t = token.trim();
    if (t === '') throw new ConfigError('PLANT_STORE_TOKENS', `token ${i + 1} is empty (tokens are separated by commas)`);
    if (!BEARER_TOKEN.test(t)) {
      throw new ConfigError(
        'PLANT_STORE_TOKENS',
        `token ${i + 1} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`,
      );
    }
    return t;
  });
}

/** `https://a.example, https://b.example` or `*`: each origin a scheme, a host and an optional port. */
function corsOrigins(env: Env): string[] {
  const raw = env.CORS_ORIGINS;
  if (raw === undefined || raw.trim() === '') return [];
  if (raw.trim() === '*') return ['*'];
  return raw.split(',').map((origin, i) => {
    const o = origin.trim();
    if (!/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/.test(o)) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `origin ${i + 1} ("${o}") must look like https://example.com or http://host:port, or the whole setting be *`,
      );
    }
    return o.toLowerCase();
  });
}

/**
 * WEB_CONCURRENCY: how many processes serve. Unset: one per CPU on PostgreSQL, which settles every race
 * between processes itself; one on SQLite, whose single writer gains nothing from more processes
 * (writes would contend for the file lock instead of sharing group commits).
 */
function webConcurrency(env: Env): number {
  const usesPostgres = /^postgres(ql)?:\/\//.test(env.DATABASE_URL ?? '');
  return integer(env, 'WEB_CONCURRENCY', usesPostgres ? Math.min(availableParallelism(), 256) : 1, 1, 256);
}

/** Hides the password of a URL so that a message or a log line never carries it. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}

export function loadConfig(env: Env = process.env): Config {
  const config: Config = {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST === undefined || env.HOST === '' ? '127.0.0.1' : env.HOST,
    databaseUrl: databaseUrl(env),
    tokens: tokens(env),
    bodyLimit: integer(env, 'BODY_LIMIT', 64 * 1024, 1024, 16 * 1024 * 1024),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', 'FULL', ['FULL', 'NORMAL']),
    dbTimeoutMs: integer(env, 'DB_TIMEOUT_MS', 5000, 100, 600_000),
    pgPoolSize: integer(env, 'PG_POOL_SIZE', 10, 1, 1000),
    webConcurrency: webConcurrency(env),
    corsOrigins: corsOrigins(env),
    headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 600_000),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 1024, 1, 1_000_000),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 0, 0, 100_000_000),
    overloadEventLoopDelayMs: integer(env, 'OVERLOAD_EVENT_LOOP_DELAY_MS', 500, 0, 60_000),
    overloadHeapUsedMb: integer(env, 'OVERLOAD_HEAP_USED_MB', 0, 0, 1_000_000),
  };
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS', `must not exceed REQUEST_TIMEOUT_MS (${config.requestTimeoutMs}), got ${config.headersTimeoutMs}`);
  }
  // The readers above give each setting its own message; this guards the schema and the readers
  // against drifting apart.
  const error = Value.Errors(ConfigSchema, config).First();
  if (error) throw new ConfigError(error.path, error.message);
  return config;
}
