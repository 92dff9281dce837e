import type { Static, TObject } from '@sinclair/typebox';
import { AUTH_SETTINGS } from './auth.js';
import { BACKUP_SETTINGS } from './backup.js';
import { EVENT_SETTINGS } from './events.js';
import { IDEMPOTENCY_SETTINGS } from './idempotency.js';
import { readSetting } from './read.js';
import { PROCESS_SETTINGS } from './process.js';
import { LISTEN_SETTINGS, SERVER_SETTINGS } from './server.js';
import type { Setting } from './setting.js';
import { STORE_SETTINGS } from './store.js';
import { TRACING_SETTINGS } from './tracing.js';
import { settingTypos } from './typos.js';
import { WEBHOOK_SETTINGS } from './webhooks.js';
import { databaseKind } from '../store/database-url.js';

/**
 * Every setting the service reads, in one table (src/config/*.ts, by area): the environment variable,
 * the schema (type, bounds, default, meaning) and, where the text needs more than a number, a word or a
 * comma list, a parser. The Config type, the reader (config/read.ts, which validates each value by its
 * schema) and docs/configuration.md's table are all made from this table, so they cannot drift apart.
 * Settings are read once, at start; a bad value stops the start with a one-line message naming the
 * variable. Code reads the resolved Config only. The order is docs/configuration.md's (and a computed default may
 * read the settings above it).
 */
export const SETTINGS = {
  ...LISTEN_SETTINGS,
  ...STORE_SETTINGS,
  ...AUTH_SETTINGS,
  ...SERVER_SETTINGS,
  ...PROCESS_SETTINGS,
  ...IDEMPOTENCY_SETTINGS,
  ...WEBHOOK_SETTINGS,
  ...EVENT_SETTINGS,
  ...BACKUP_SETTINGS,
  ...TRACING_SETTINGS,
};

type Settings = typeof SETTINGS;
type Env = Record<string, string | undefined>;

/** The resolved settings: their type is the schemas' (one object schema of every setting's). */
type ConfigSchema = TObject<{ [K in keyof Settings]: Settings[K]['schema'] }>;
export type Config = Static<ConfigSchema>;

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super(`${setting}: ${problem}`);
    this.name = 'ConfigError';
  }
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
  if (config.backupDir !== '' && databaseKind(config.databaseUrl) === 'postgres') {
    throw new ConfigError('BACKUP_DIR', 'takes SQLite backups; back up PostgreSQL with pg_dump or pg_basebackup (see docs/backups.md)');
  }
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
      const fallback = setting.defaultFrom ? setting.defaultFrom(resolved) : (setting.schema as { default?: unknown }).default;
      // A fresh copy: defaults such as [] must not be shared between configurations.
      resolved[key] = Array.isArray(fallback) ? [...(fallback as unknown[])] : fallback;
      continue;
    }
    try {
      resolved[key] = readSetting(setting, text);
    } catch (error) {
      throw new ConfigError(setting.env, error instanceof Error ? error.message : String(error));
    }
  }
  const config = resolved as Config;
  // The schedule's settings without its directory would be ignored: say so rather than take no backups.
  for (const name of [SETTINGS.backupIntervalSeconds.env, SETTINGS.backupKeep.env]) {
    if (config.backupDir === '' && (env[name] ?? '').trim() !== '') throw new ConfigError(name, 'is set but backups are off: set BACKUP_DIR');
  }
  checkRelations(config);
  return config;
}

/** Warnings for variables of `env` that look like a misspelt setting (config/typos.ts), said at start. */
export function misspeltSettings(env: Env = process.env): string[] {
  return settingTypos(
    env,
    Object.values(SETTINGS).map((setting: Setting) => setting.env),
  );
}

/** docs/configuration.md's table, made from the settings table (test/config/docs.test.ts keeps the page in step). */
export function configTable(): string {
  const rows = (Object.values(SETTINGS) as Setting[]).map((setting) => {
    const schema = setting.schema as { default?: unknown; description?: string };
    const fallback = setting.docDefault ?? (Array.isArray(schema.default) && schema.default.length === 0 ? 'none' : `\`${String(schema.default)}\``);
    return `| \`${setting.env}\` | ${fallback} | ${schema.description ?? ''} |`;
  });
  return ['| Setting | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
