import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { cpuSeconds } from './proc.js';
import { pinned } from './servers.js';

/**
 * The import scenario: a million plants as NDJSON over HTTP (POST /plants/import) into an empty store,
 * fsync on, and, for scale on a machine whose speed changes from day to day, the same rows written by a
 * bare program straight into the same kind of store in the same run (bench/import-reference.ts).
 */

export const IMPORT_ROWS = 1_000_000;

export interface ImportMeasurement {
  target: 'bare driver' | 'service' | 'compared';
  rows: number;
  seconds: number;
  /** The writing process's CPU over the import, in seconds (all its threads). */
  cpuSeconds?: number | undefined;
  peakRssMb?: number | undefined;
}

/** Row i of the import, the same bytes for the service and the bare program. */
export function importLine(i: number): string {
  return `{"id":${i},"name":"Monstera deliciosa number ${i}","tag":"bulk-${i % 97}"}\n`;
}

/** Streams IMPORT_ROWS plants to the service and resolves when it answered 200. */
export function importOverHttp(port: number, token: string, rows: number, serverPid: number): Promise<Omit<ImportMeasurement, 'target'>> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const cpuBefore = cpuSeconds(serverPid);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/plants/import',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const seconds = (performance.now() - started) / 1000;
          const cpuAfter = cpuSeconds(serverPid);
          if (res.statusCode !== 200) return reject(new Error(`import answered ${res.statusCode}: ${body.slice(0, 300)}`));
          resolve({ rows, seconds, cpuSeconds: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore });
        });
      },
    );
    req.on('error', reject);
    let next = 1;
    const write = () => {
      while (next <= rows) {
        let chunk = '';
        for (const end = Math.min(rows, next + 999); next <= end; next++) chunk += importLine(next);
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

/** The bare program, pinned where the service runs, writing the same rows into a fresh store at `url`. */
export function importBare(script: string, url: string, rows: number): Promise<ImportMeasurement> {
  const [command, args] = pinned(0, [script, url, String(rows)]);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`the bare import exited with ${code}`));
      resolve({ target: 'bare driver', ...(JSON.parse(out) as Omit<ImportMeasurement, 'target'>) });
    });
  });
}

export function importTable(measurements: ImportMeasurement[], store: 'sqlite' | 'postgres'): string {
  const target = store === 'sqlite' ? 250_000 : 100_000;
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const rate = (m: ImportMeasurement) => m.rows / m.seconds;
  const bare = mean(measurements.filter((m) => m.target === 'bare driver').map(rate));
  const lines = [
    `| import of ${(measurements[0]?.rows ?? IMPORT_ROWS).toLocaleString('en-US')} plants | runs | plants/s (each run) | share of the bare driver | CPU s | peak RSS MB | target |`,
    '|---|---:|---|---:|---:|---:|---|',
  ];
  for (const who of ['bare driver', 'service', 'compared'] as const) {
    const runs = measurements.filter((m) => m.target === who);
    if (runs.length === 0) continue;
    const rates = runs.map(rate);
    const cpu = runs.map((m) => m.cpuSeconds).filter((c): c is number => c !== undefined);
    const rss = runs.map((m) => m.peakRssMb).filter((r): r is number => r !== undefined);
    const share = who !== 'bare driver' && bare > 0 ? (mean(rates) / bare).toFixed(2) : '';
    const verdict = who !== 'bare driver' ? `≥ ${target.toLocaleString('en-US')}/s: **${mean(rates) >= target ? 'met' : 'not met'}**` : '';
    lines.push(
      `| ${who} | ${runs.length} | ${Math.round(mean(rates)).toLocaleString('en-US')} (${rates.map((r) => Math.round(r).toLocaleString('en-US')).join(', ')}) | ${share} | ${cpu.length ? mean(cpu).toFixed(1) : '–'} | ${rss.length ? Math.max(...rss).toFixed(0) : '–'} | ${verdict} |`,
    );
  }
  return lines.join('\n');
}
