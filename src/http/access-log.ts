import type { FastifyBaseLogger, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import { loggableUrl } from './logging.js';

/**
 * The access log: one line per request, `{"level":30,"time":…,"pid":…,"hostname":…,"reqId":…,"method":…,
 * "url":…,"status":…,"ms":…,"msg":"request"}`. Written through pino this line costs several
 * microseconds, most of it the redaction wildcards, which inspect every field of every line. Its
 * fields are known and safe (method, the URL with query tokens hidden, status, time), so it is built
 * here, from pino's own prefix, time and request bindings, and handed to pino's stream: the same bytes
 * pino would write. A logger configured in a way this does not reproduce (custom formatters or message
 * key) gets the plain pino call instead.
 */

const LEVEL_INFO = 30;

interface PinoInternals {
  levelPrefix: Record<number, string> | undefined;
  time: (() => string) | undefined;
  stream: { write(line: string): unknown } | undefined;
  formatters: { log?: unknown; bindings?: unknown; level?: unknown } | undefined;
  messageKey: string | undefined;
}

/** pino keeps its state under symbols private to it (pino.symbols); they are found by their descriptions. */
function pinoSymbols(log: object): Map<string, symbol> {
  const found = new Map<string, symbol>();
  for (let o: object | null = log; o !== null; o = Object.getPrototypeOf(o) as object | null) {
    for (const symbol of Object.getOwnPropertySymbols(o)) {
      if (symbol.description !== undefined && !found.has(symbol.description)) found.set(symbol.description, symbol);
    }
  }
  return found;
}

function internals(log: FastifyBaseLogger, symbols: Map<string, symbol>): PinoInternals {
  const l = log as unknown as Record<symbol, unknown>;
  const get = (name: string) => {
    const symbol = symbols.get(name);
    return symbol === undefined ? undefined : l[symbol];
  };
  return {
    levelPrefix: get('pino.lsCache') as PinoInternals['levelPrefix'],
    time: get('pino.time') as PinoInternals['time'],
    stream: get('pino.stream') as PinoInternals['stream'],
    formatters: get('pino.formatters') as PinoInternals['formatters'],
    messageKey: get('pino.messageKey') as string | undefined,
  };
}

function slowHook(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const ms = Math.round(reply.elapsedTime * 100) / 100;
  request.log.info({ method: request.method, url: loggableUrl(request.url), status: reply.statusCode, ms }, 'request');
  done();
}

/** The onResponse hook writing the access line, or undefined when info lines are not logged. */
export function accessLogHook(log: FastifyBaseLogger): onResponseHookHandler | undefined {
  if (!(log as unknown as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info')) return undefined;
  const symbols = pinoSymbols(log);
  const chindingsSymbol = symbols.get('pino.chindings');
  const pino = internals(log, symbols);
  const prefix = pino.levelPrefix?.[LEVEL_INFO];
  const { time, stream, formatters } = pino;
  const plain = formatters !== undefined && formatters.log === undefined && pino.messageKey === 'msg';
  if (prefix !== `{"level":${LEVEL_INFO}` || typeof time !== 'function' || stream === undefined || !plain || chindingsSymbol === undefined) {
    return slowHook;
  }
  return function accessLog(request, reply, done) {
    const chindings = (request.log as unknown as Record<symbol, unknown>)[chindingsSymbol];
    if (typeof chindings !== 'string') return slowHook(request, reply, done);
    const ms = Math.round(reply.elapsedTime * 100) / 100;
    stream.write(
      `${prefix}${time.call(log)}${chindings},"method":${JSON.stringify(request.method)},"url":${JSON.stringify(loggableUrl(request.url))},` +
        `"status":${reply.statusCode},"ms":${ms},"msg":"request"}\n`,
    );
    done();
  };
}
