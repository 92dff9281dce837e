import { parseJson, stringifyJson } from '@plant-store/client/json';
import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';

/**
 * npm run bench:json: the exact JSON parser of @plant-store/client (which the service reads request bodies
 * with too) against JSON.parse, and against the parser it replaced (JSON.parse, or lossless-json for a text
 * with a run of 16 digits), on the documents the API carries: one plant and a page of 100, with ids that fit
 * a double (the common case: JSON.parse's fast path) and ids beyond 2^53 (the exact path). Times are per
 * document, the best of several rounds in which the parsers take turns, so the ratios compare on a shared
 * machine; every result is first checked to be exact.
 */

const ROUNDS = 15;
const TARGET_MS = 150;

function plant(id: bigint, i: number): string {
  return `{"id":${id},"name":"Monstera deliciosa ${i}","tag":"tropical"}`;
}
function page(first: bigint): string {
  return `[${Array.from({ length: 100 }, (_, i) => plant(first + BigInt(i), i)).join(',')}]`;
}

const BIG = 2n ** 62n + 12345n;
const DOCUMENTS: Array<{ name: string; text: string; exact: boolean }> = [
  { name: 'one plant, small id', text: plant(42n, 1), exact: false },
  { name: 'a page of 100, small ids', text: page(1_000n), exact: false },
  { name: 'one plant, id beyond 2^53', text: plant(BIG, 1), exact: true },
  { name: 'a page of 100, ids beyond 2^53', text: page(BIG), exact: true },
];

/** The service's parser before this one: JSON.parse unless a run of 16 digits, then lossless-json. */
function before(text: string): unknown {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  const parseNumber = (value: string) => {
    const number = Number(value);
    return /^-?\d+$/.test(value) && !Number.isSafeInteger(number) ? BigInt(value) : number;
  };
  return parseLossless(text, null, { parseNumber, onDuplicateKey: ({ newValue }) => newValue });
}

/** Nanoseconds per call of each function: the best of ROUNDS rounds, the functions taking turns in each round. */
function time(fns: Array<() => unknown>): number[] {
  let calls = 1;
  for (let start = performance.now(); performance.now() - start < TARGET_MS / 4; calls *= 2) for (let i = 0; i < calls; i++) fns[0]!();
  const best = fns.map(() => Infinity);
  for (let round = 0; round < ROUNDS; round++) {
    fns.forEach((fn, f) => {
      const start = performance.now();
      for (let i = 0; i < calls; i++) fn();
      best[f] = Math.min(best[f]!, ((performance.now() - start) * 1e6) / calls);
    });
  }
  return best;
}

function check(name: string, text: string): void {
  const expected = stringifyLossless(before(text));
  if (stringifyJson(parseJson(text)) !== expected || expected !== text) throw new Error(`${name}: parseJson is not exact`);
}

const format = (ns: number) => (ns >= 10_000 ? `${(ns / 1000).toFixed(0)} µs` : ns >= 1000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`);

console.log(`node ${process.version}; per document, best of ${ROUNDS} rounds\n`);
console.log('| document | bytes | JSON.parse (rounds ids) | parseJson | before (lossless-json) | parseJson / JSON.parse | before / parseJson |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const { name, text, exact } of DOCUMENTS) {
  check(name, text);
  if (exact !== /\d{16}/.test(text)) throw new Error(`${name}: not the path it is meant to measure`);
  const [native, ours, theirs] = time([(): unknown => JSON.parse(text), () => parseJson(text), () => before(text)]) as [number, number, number];
  const cells = [name, text.length, format(native), format(ours), format(theirs), (ours / native).toFixed(2), (theirs / ours).toFixed(1)];
  console.log(`| ${cells.join(' | ')} |`);
}

const value = parseJson(page(BIG));
console.log('\n| stringify a page of 100, ids beyond 2^53 | stringifyJson | lossless-json |\n|---|---:|---:|');
const [ours, theirs] = time([() => stringifyJson(value), () => stringifyLossless(value)]) as [number, number];
console.log(`| | ${format(ours)} | ${format(theirs)} |`);
