import type { FastifyBaseLogger, onResponseHookHandler } from 'fastify';
import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger } from 'pino';
import { BatchedDestination } from './destination.js';
import type { Config } from '../config/config.js';

/**
 * Where a token could reach a log line, and what takes it out. The app logs no request headers and
 * no bodies; these paths cover a serializer or a future log call that would (pino redacts by path,
 * before the line is written).
 */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'token',
  'secret',
  '*.authorization',
  '*.token',
  '*.secret',
];

/**
 * Query parameters whose value is a credential: `token`, `access_token` (RFC 6750 allows a token in the
 * query; the service does not take one, but a client may still send it) and any other `…_token` or
 * `…-token` (`id_token`, `refresh_token`). Names are judged as a query parser reads them: in any case,
 * percent-decoded (`?Token=`, `?ACCESS_TOKEN=`, `?access%5Ftoken=`).
 */
const TOKEN_NAME = /^(?:.*[_-])?token$/i;
/** A query that holds neither `token` in any case nor a percent escape cannot name one: most URLs stop here. */
const MAY_NAME_TOKEN = /token|%/i;

function decodedName(name: string): string {
  if (!name.includes('%')) return name;
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** The URL as a log line may show it: the value of every query parameter named like a token is replaced. */
export function loggableUrl(url: string): string {
  const at = url.indexOf('?');
  if (at === -1 || !MAY_NAME_TOKEN.test(url.slice(at + 1))) return url;
  const parameters = url
    .slice(at + 1)
    .split('&')
    .map((parameter) => {
      const eq = parameter.indexOf('=');
      return eq !== -1 && TOKEN_NAME.test(decodedName(parameter.slice(0, eq))) ? `${parameter.slice(0, eq)}=[redacted]` : parameter;
    });
  return `${url.slice(0, at + 1)}${parameters.join('&')}`;
}

/** pino's number for warn: lines at this level and above are written at once. */
const WARN = 40;
/** Standard output, written in batches (see logging/destination.ts). */
export function logDestination(fd = 1): BatchedDestination {
  return new BatchedDestination(fd);
}

/** Each logger createLogger made, with its destination and base fields: the access log writes its lines there itself. */
const destinations = new WeakMap<object, { destination: DestinationStream; base: Record<string, unknown> }>();

/**
 * The server's logger: JSON lines (pino), tokens redacted wherever a serializer might put them, to the
 * destination (JSON lines in batches, or readable text on a terminal: logging/format.ts).
 * A warning, an error or a fatal line reaches the destination at once, with every line before it.
 */
export function createLogger(level: Config['logLevel'], destination: DestinationStream & { flush?(): void }): Logger {
  // pino's default base fields, said here so that the access log can write them too.
  const base = { pid: process.pid, hostname: hostname() };
  const logger = pino(
    {
      level,
      base,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      hooks: {
        logMethod(args, method, levelNumber) {
          method.apply(this, args);
          if (levelNumber >= WARN) destination.flush?.();
        },
      },
    },
    destination,
  );
  destinations.set(logger, { destination, base });
  return logger;
}

/**
 * The access log: one line per request, `{"level":30,"time":…,"pid":…,"hostname":…,"reqId":…,"method":…,
 * "url":…,"status":…,"ms":…,"msg":"request"}`, or undefined when info lines are not logged. Its fields
 * are known and safe (the URL goes through loggableUrl), so no redaction is needed. For a logger of
 * createLogger the line is made here, its constant part once, and handed to the destination: pino's
 * general path (a child's bindings, each field's type looked at, each value escaped) was a noticeable
 * share of a request's CPU, several times what this costs (bench/stages.ts; figures in bench/RESULTS.md).
 * Any other logger gets it through a child logger without redaction (its wildcards would otherwise
 * inspect every field of every line).
 */
export function accessLogHook(log: FastifyBaseLogger, root?: Logger): onResponseHookHandler | undefined {
  // Without a logger Fastify's stand-in has no isLevelEnabled: nothing is logged then.
  const levels = log as Partial<Pick<Logger, 'isLevelEnabled'>>;
  if (typeof levels.isLevelEnabled !== 'function' || !levels.isLevelEnabled('info')) return undefined;
  // `root`: the logger the app was given (Fastify logs through a child of it, with the same bindings).
  const made = root && destinations.get(root);
  if (root && made) return directAccessLog(root, made.destination, made.base);
  const access = log.child({}, { redact: [] });
  return function accessLog(request, reply, done) {
    access.info(
      {
        reqId: request.id,
        method: request.method,
        url: loggableUrl(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
    done();
  };
}

/** The access line as createLogger's pino would write it (its default time, its bindings: pid and hostname), made by hand. */
function directAccessLog(log: Logger, destination: DestinationStream, base: Record<string, unknown>): onResponseHookHandler {
  const bindings = JSON.stringify({ ...base, ...log.bindings() }).slice(1, -1);
  const head = `{"level":${log.levels.values.info},"time":`;
  const afterTime = bindings === '' ? ',"reqId":' : `,${bindings},"reqId":`;
  return function accessLog(request, reply, done) {
    destination.write(
      `${head}${Date.now()}${afterTime}${JSON.stringify(request.id)},"method":${JSON.stringify(request.method)},"url":${JSON.stringify(loggableUrl(request.url))},"status":${reply.statusCode},"ms":${Math.round(reply.elapsedTime * 100) / 100},"msg":"request"}\n`,
    );
    done();
  };
}

type LogArgs = Parameters<Logger['info']>;

/**
 * The logger of one request, made only when the request logs something. Fastify gives every request a
 * child logger carrying its reqId; with redaction a pino child is costly to make (measured in
 * bench/RESULTS.md), and one would be made for every request, while most requests log nothing but their
 * access line (which does not use it). Installed with Fastify's `childLoggerFactory` option.
 */
class RequestLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
  ) {}

  private get log(): Logger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.log.level = level;
  }
  fatal(...args: LogArgs): void {
    if (this.parent.isLevelEnabled('fatal')) this.log.fatal(...args);
  }
  error(...args: LogArgs): void {
    if (this.parent.isLevelEnabled('error')) this.log.error(...args);
  }
  warn(...args: LogArgs): void {
    if (this.parent.isLevelEnabled('warn')) this.log.warn(...args);
  }
  info(...args: LogArgs): void {
    if (this.parent.isLevelEnabled('info')) this.log.info(...args);
  }
  debug(...args: LogArgs): void {
    if (this.parent.isLevelEnabled('debug')) this.log.debug(...args);
  }
  trace(...args: LogArgs): void {
    if (this.parent.isLevelEnabled('trace')) this.log.trace(...args);
  }
  silent(): void {}
  child(bindings: Record<string, unknown>, options?: object): Logger {
    return this.log.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: a request's logger, made on first use (see RequestLogger). */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Record<string, unknown>, options: object): FastifyBaseLogger {
  return new RequestLogger(logger as Logger, bindings, options);
}
