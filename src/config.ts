import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

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
      throw new ConfigError('PLANT_STORE_TOKENS', `token ${i + 1} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`);
    }
    return t;
  });
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
  };
  // The readers above give each setting its own message; this guards the schema and the readers
  // against drifting apart.
  const error = Value.Errors(ConfigSchema, config).First();
  if (error) throw new ConfigError(error.path, error.message);
  return config;
}
