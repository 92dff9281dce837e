import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';

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

/** RFC 6750 allows a token in the query (`access_token=`); the service does not, but a client may still send one. */
const QUERY_TOKEN = /([?&](?:access_token|token)=)[^&#]*/gi;

/** The URL as a log line may show it: a token sent in the query string is replaced. */
export function loggableUrl(url: string): string {
  return url.includes('token=') || url.includes('TOKEN=') ? url.replace(QUERY_TOKEN, '$1[redacted]') : url;
}

/** The server's logger: structured JSON (pino) on stdout, one child per request carrying its reqId. */
export function loggerOptions(level: Config['logLevel'], stream?: { write(line: string): unknown }): NonNullable<FastifyServerOptions['logger']> {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    ...(stream === undefined ? {} : { stream }),
  };
}
