import type { ValidateFunction } from 'ajv';
import { Ajv } from 'ajv';
import { validatorCompiler } from '../src/http/validation.js';
import { joinProblems, validationProblems } from '../src/http/validation-messages.js';
import { NewPlant } from '../src/plants/schema.js';

/**
 * What reporting every problem of a request costs (issue 22), with nothing else in the process: the CPU
 * of validating one POST /plants body, valid and invalid, by
 * - the validator as it was: one Ajv pass that stops at the first problem;
 * - one Ajv pass with allErrors, the obvious way to list every problem;
 * - the service's (http/validation.ts): the first kind for every request, then, for a refused one only,
 *   an allErrors pass; and the words of the message (validation-messages.ts).
 * Each figure is the best of 7 rounds, in nanoseconds per call. The service's CPU per request is some
 * 300-700 µs (npm run bench, post64), so a difference under a microsecond does not show there.
 *
 *   npm run bench:validation
 */

const ROUNDS = 7;

/** The body schema as the service compiles it: int64 by its keyword (validation.ts's forValidation, for NewPlant). */
function asCompiled(schema: unknown): object {
  return JSON.parse(JSON.stringify(schema), (_key, value: unknown) => {
    const node = value as { type?: string; format?: string } | null;
    if (node && node.type === 'integer' && node.format === 'int64') {
      const { type: _type, format: _format, ...rest } = node;
      return { ...rest, int64: true };
    }
    return value;
  }) as object;
}

function plainAjv(allErrors: boolean): ValidateFunction {
  const ajv = new Ajv({ allErrors, strict: true, strictTypes: false });
  ajv.addKeyword({
    keyword: 'int64',
    schemaType: 'boolean',
    errors: true,
    validate: (_schema: unknown, data: unknown) => (typeof data === 'number' ? Number.isSafeInteger(data) : typeof data === 'bigint'),
  });
  return ajv.compile(asCompiled(NewPlant));
}

/** Nanoseconds per call of `fn`, the best of ROUNDS rounds of `calls` calls. */
function nsPerCall(fn: () => unknown, calls: number): number {
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / calls);
  }
  return best;
}

const VALID = { id: 123456, name: 'Monstera deliciosa', tag: 'tropical' };
const INVALID = { id: '7', name: '', tag: 5 };

const firstOnly = plainAjv(false);
const allErrors = plainAjv(true);
const service = validatorCompiler({ schema: NewPlant, httpPart: 'body', method: 'POST', url: '/plants' }) as ValidateFunction;
const serviceWithWords = () => service(INVALID) || joinProblems(validationProblems('body', service.errors ?? []));

const rows: Array<[string, number, number]> = [
  ['as it was (stops at the first problem)', nsPerCall(() => firstOnly(VALID), 2_000_000), nsPerCall(() => firstOnly(INVALID), 500_000)],
  ['one pass with allErrors', nsPerCall(() => allErrors(VALID), 2_000_000), nsPerCall(() => allErrors(INVALID), 500_000)],
  ['the service (first pass; allErrors when refused)', nsPerCall(() => service(VALID), 2_000_000), nsPerCall(() => service(INVALID), 500_000)],
  ['the service, and the message in words', nsPerCall(() => service(VALID), 2_000_000), nsPerCall(serviceWithWords, 200_000)],
];
process.stdout.write(`validating a POST /plants body, ns per call (best of ${ROUNDS} rounds; Node ${process.version})\n\n`);
process.stdout.write('| validator | valid body | invalid body (3 problems) |\n|---|---:|---:|\n');
for (const [name, valid, invalid] of rows) process.stdout.write(`| ${name} | ${valid.toFixed(0)} | ${invalid.toFixed(0)} |\n`);
process.stdout.write(`\n${joinProblems(validationProblems('body', (service(INVALID), service.errors ?? [])))}\n`);
