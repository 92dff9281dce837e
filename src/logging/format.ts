import { pino, type DestinationStream } from 'pino';
import type { Config } from '../config/config.js';

/**
 * How log lines are written: JSON lines for machines (production, a pipe, a file, a log collector), or
 * readable text (pino-pretty) for a person watching a terminal. Only the look changes: the same lines,
 * the same redaction, the same levels.
 */
export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT=auto means readable text only on a terminal, and never with NODE_ENV=production. */
export function chooseLogFormat(setting: Config['logFormat'], stdoutIsTerminal: boolean, nodeEnv: string | undefined): LogFormat {
  if (setting !== 'auto') return setting;
  return stdoutIsTerminal && nodeEnv !== 'production' ? 'pretty' : 'json';
}

/** The fields of the access line (logging/logger.ts accessLogHook), shown as one short message. */
interface AccessLine {
  level: number;
  time: number;
  reqId: string;
  method: string;
  url: string;
  status: number;
  ms: number;
  msg: 'request';
}

function isAccessLine(line: Record<string, unknown>): line is Record<string, unknown> & AccessLine {
  return line.msg === 'request' && typeof line.method === 'string' && typeof line.status === 'number';
}

/**
 * Readable lines on standard output, written at once (sync): `[12:00:00.123] INFO: GET /plants 200 1.2 ms
 * {"reqId":"…"}`. pino-pretty is loaded only here, so a service logging JSON never loads it; it runs in
 * this thread (no worker transport), formatting each line as pino hands it over.
 */
export async function prettyDestination(fd = 1): Promise<DestinationStream> {
  const { prettyFactory } = (await import('pino-pretty')).default;
  // Colours when the terminal takes them (pino-pretty's default honours NO_COLOR).
  const prettify = prettyFactory({ translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true });
  // sonic-boom, synchronous: waits out a terminal that is not ready (EAGAIN) instead of dropping lines.
  const out = pino.destination({ dest: fd, sync: true });
  return {
    write(line: string): void {
      const log = JSON.parse(line) as Record<string, unknown>;
      const shown = isAccessLine(log)
        ? { level: log.level, time: log.time, reqId: log.reqId, msg: `${log.method} ${log.url} ${log.status} ${log.ms} ms` }
        : log;
      out.write(prettify(shown));
    },
  };
}
