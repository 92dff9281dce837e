import { readFileSync } from 'node:fs';
import { stageRows, stageTable } from './stages.js';

/**
 * Where the time goes in a V8 CPU profile (node --cpu-prof): self time by function and by package,
 * so the hot path can be read without a browser. Usage: node dist/bench/profile.js <file.cpuprofile> [top]
 * With --stages <folder> (a `npm run bench -- --cpu-prof` run's profiles): µs per request by stage of the
 * request path, per scenario (bench/stages.ts).
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
}

/** The package or area a script belongs to: node internals, a dependency, or our own code. */
function area(url: string): string {
  if (url === '') return '(native / V8)';
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const dist = url.indexOf('/dist/');
  return dist === -1 ? url : url.slice(dist + '/dist/'.length);
}

function top(map: Map<string, number>, total: number, count: number): string[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, hits]) => `${((hits / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
}

function summarize(file: string, count: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = area(url);
    const name = `${functionName || '(anonymous)'} ${where}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
    byArea.set(where, (byArea.get(where) ?? 0) + hits);
  }
  process.stdout.write(`${total} samples over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s\n\nBy area:\n`);
  process.stdout.write(`${top(byArea, total, count).join('\n')}\n\nBy function (self time):\n${top(byFunction, total, count).join('\n')}\n`);
}

if (process.argv[2] === '--stages') {
  const dir = process.argv[3];
  if (!dir) throw new Error('usage: node dist/bench/profile.js --stages <profile folder>');
  // --detail: also the functions each stage's time was spent in (all runs of the folder together, share of the main thread's busy time).
  const leaves = process.argv.includes('--detail') ? new Map<string, number>() : undefined;
  process.stdout.write(`${stageTable(stageRows(dir, leaves))}\n`);
  if (leaves) {
    const busy = [...leaves.values()].reduce((a, b) => a + b, 0);
    process.stdout.write(`\n${top(leaves, busy, 60).join('\n')}\n`);
  }
} else {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node dist/bench/profile.js <file.cpuprofile> [top] | --stages <profile folder>');
  summarize(file, Number(process.argv[3] ?? 30));
}
