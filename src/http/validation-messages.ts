import type { ErrorObject } from 'ajv';
import { STORABLE_TEXT } from '../model/plant.js';
import { count, oneEditAway } from '../words.js';
import { ACCESS_TOKEN_NOT_TAKEN } from './access-token.js';
import type { ErrorCode } from './error-codes.js';

/**
 * Validation problems in plain words, each naming the field and the rule: "body.name must not be
 * empty", "querystring.limit must be at most 1000", "unknown query parameter "nme"". A request part
 * (`body`, `querystring`, `params`, `headers`) prefixes the field as a path; a row of an import
 * (`line 17`, `element 3`) is named once, before a colon: "line 17: name must not be empty".
 */

/** At most this many problems are worded into one message; the rest are counted. */
export const MAX_PROBLEMS = 10;
/** Ajv's errors looked at, at most: enough for MAX_PROBLEMS distinct problems, however many the input has. */
const MAX_ERRORS = 200;
/** A name taken from the request (an unknown field or parameter) is shown up to this length. */
const NAME_SHOWN = 60;

const INT64_RANGE = 'from -9223372036854775808 to 9223372036854775807';

type Problem = Pick<ErrorObject, 'keyword' | 'instancePath' | 'params' | 'message'> &
  Partial<Pick<ErrorObject, 'schemaPath' | 'data' | 'parentSchema'>>;

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/**
 * A name taken from the request as a message shows it: its first NAME_SHOWN characters (code points, so
 * that a cut never splits a surrogate pair into halves that are no character), then `…`.
 */
export function shortName(name: string): string {
  // A string of at most NAME_SHOWN UTF-16 units has at most NAME_SHOWN code points: most names need no counting.
  if (name.length <= NAME_SHOWN) return name;
  let end = 0;
  for (let points = 0; points < NAME_SHOWN && end < name.length; points++) end += (name.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  return end >= name.length ? name : `${name.slice(0, end)}…`;
}

/** A name taken from the request, as JSON, shortened: `"tga"`. */
export function quoted(name: string): string {
  return JSON.stringify(shortName(name));
}

function types(type: unknown): string {
  return String(type)
    .split(',')
    .map((t) => TYPE_WORDS[t] ?? t)
    .join(' or ');
}

/** `/events/0/name` → `events[0].name`. */
function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path === '' ? part : `${path}.${part}`), '');
}

/** The rule a problem broke, in words (after the field's name), or the whole sentence when it names the field itself. */
/**
 * Plain digits that `decimal` refused all the same: a number beyond 2^53 (the parameter's range is far
 * smaller), told as the bound it passes, as a number within reach of it is ("must be at most 1000").
 */
function tooLarge(problem: Problem): string {
  const { minimum, maximum } = (problem.parentSchema ?? {}) as { minimum?: number; maximum?: number };
  const negative = typeof problem.data === 'string' && problem.data.startsWith('-');
  const bound = negative ? minimum : maximum;
  if (bound !== undefined) return `must be ${negative ? 'at least' : 'at most'} ${String(bound)}`;
  return `must be a whole number from ${String(Number.MIN_SAFE_INTEGER)} to ${String(Number.MAX_SAFE_INTEGER)}`;
}

function rule(problem: Problem, inQuery: boolean): string {
  const params = problem.params as Record<string, unknown>;
  const schema = (problem.parentSchema ?? {}) as { patternMeaning?: string; format?: string };
  switch (problem.keyword) {
    case 'type':
      // A parameter given twice arrives as a list of its values.
      return inQuery && Array.isArray(problem.data) ? 'must be given once' : `must be ${types(params.type)}`;
    case 'int64':
    case 'decimal':
      // A parameter given twice; a whole number out of range (or, as text, not in plain digits); anything else.
      if (params.given === 'repeated') return 'must be given once';
      if (problem.keyword === 'decimal')
        return params.given === 'whole number' ? tooLarge(problem) : 'must be a whole number in plain decimal digits';
      return params.given === 'whole number' ? `must be an integer ${INT64_RANGE}` : 'must be an integer';
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters long`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters long`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(params.limit)}`;
    case 'minItems':
      return params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} items`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    case 'uniqueItems': {
      const [a, b] = [Number(params.i), Number(params.j)].sort((x, y) => x - y);
      return `must not repeat an item (items ${a} and ${b} are the same)`;
    }
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'format':
      return params.format === 'date-time'
        ? 'must be a date and time in RFC 3339 form, such as 2026-01-31T12:00:00Z'
        : `must be in the ${String(params.format)} format`;
    case 'pattern':
      // STORABLE_TEXT (model/plant.ts) is the pattern of free text; others may say what they mean.
      if (params.pattern === STORABLE_TEXT) return 'must not contain U+0000 or an unpaired surrogate';
      return schema.patternMeaning ?? `must match the pattern ${String(params.pattern)}`;
    default:
      return problem.message ?? 'is not valid';
  }
}

/**
 * A choice between kinds of value (`"tag": string or null`) fails in every branch. When the value is of
 * a branch's kind and breaks another of its rules, that branch's problems are the ones to tell;
 * otherwise the problem is the kind: "must be a string or null".
 */
function settleChoices(problems: Problem[]): Problem[] {
  let result = problems;
  for (const choice of problems.filter((p) => p.keyword === 'anyOf' && p.schemaPath !== undefined)) {
    const prefix = `${choice.schemaPath}/`;
    const inside = result.filter((p) => p.schemaPath?.startsWith(prefix));
    const outside = result.filter((p) => p !== choice && !p.schemaPath?.startsWith(prefix));
    const branchOf = (p: Problem) => p.schemaPath!.slice(prefix.length).split('/', 1)[0];
    const kindOnly = (p: Problem) => p.keyword === 'type' && p.instancePath === choice.instancePath;
    const fitting = inside.find((p) => !kindOnly(p));
    const told = fitting
      ? inside.filter((p) => branchOf(p) === branchOf(fitting))
      : [{ ...choice, keyword: 'type', params: { type: inside.filter(kindOnly).map((p) => (p.params as { type: string }).type) } }];
    result = [...outside, ...told];
  }
  return result;
}

/**
 * The field of `fields` that an unknown field `name` is one edit from (`"tga"` for tag), and that the
 * object `given` lacks: what was meant. `fields`: an operation's optional fields (a required one missing
 * is a refusal of its own, whose words name the typo: misspelt).
 */
export function meantField(name: string, fields: Iterable<string>, given: object): string | undefined {
  for (const field of fields) if (!Object.hasOwn(given, field) && oneEditAway(name, field)) return field;
  return undefined;
}

/** The optional fields of an object schema: its properties that it does not require. */
export function optionalFields(schema: { properties?: Record<string, unknown>; required?: readonly string[] } | undefined): string[] {
  const required = new Set(schema?.required ?? []);
  return Object.keys(schema?.properties ?? {}).filter((field) => !required.has(field));
}

/**
 * The field of an object, named by no property of its schema, that is one edit from the required field
 * `missing` (`{"nmae": "Fern"}` for name): what the client meant, said beside "is required" whether or not
 * unknown fields are refused, since the request is refused for it either way. Looked for only in a
 * refusal's words: a valid request pays nothing.
 */
function misspelt(problem: Problem, missing: string): string | undefined {
  const data = problem.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const named = (problem.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  for (const key of Object.keys(data)) if (!Object.hasOwn(named, key) && oneEditAway(key, missing)) return key;
  return undefined;
}

/** One problem as a sentence, the field named from `context` (a request part, or an import's row). */
function sentence(context: string, problem: Problem): string {
  const row = !/^[a-z]+$/.test(context);
  const field = fieldPath(problem.instancePath);
  const params = problem.params as Record<string, unknown>;
  // An item of a list is `answer[0]`, a field `body.name`.
  const where = field === '' ? (row ? 'the row' : context) : row ? field : `${context}${field.startsWith('[') ? '' : '.'}${field}`;
  if (problem.keyword === 'additionalProperties') {
    const given = String(params.additionalProperty);
    const name = quoted(given);
    if (context === 'querystring' && field === '')
      return `unknown query parameter ${name}${name === '"access_token"' ? `: ${ACCESS_TOKEN_NOT_TAKEN}` : ''}`;
    const data = problem.data;
    const meant = data !== null && typeof data === 'object' ? meantField(given, optionalFields(problem.parentSchema as never), data) : undefined;
    return `${where} has an unknown field ${name}${meant === undefined ? '' : `: did you mean ${quoted(meant)}?`}`;
  }
  if (problem.keyword === 'required') {
    // Named by its path like every other field ("body.name is required"), so that every message starts with the field.
    const missing = String(params.missingProperty);
    const required = `${field === '' ? (row ? missing : `${context}.${missing}`) : `${where}.${missing}`} is required`;
    const typo = misspelt(problem, missing);
    if (typo === undefined) return required;
    const holder = field === '' ? (row ? 'the row' : `the ${context}`) : where;
    return `${required}: did you mean ${quoted(missing)}? ${holder} has ${quoted(typo)}`;
  }
  return `${where} ${rule(problem, context === 'querystring')}`;
}

/** What a refusal's first problem concerns: its error code, and the field as the message names it (`body.name`). */
export interface ProblemTarget {
  code: ErrorCode;
  field?: string;
}

/** A field as messages name it: the request part, then the path within it, then a member's name. */
function fieldName(context: string, path: string, member?: string): string {
  const inside = path === '' ? context : `${context}${path.startsWith('[') ? '' : '.'}${path}`;
  return member === undefined ? inside : `${inside}.${member}`;
}

/**
 * The code and field of the first problem of one request part (the one its words come first): a path
 * parameter (an id: every path parameter of this service is one) is `invalid_id`, a query parameter the
 * operation does not take `unknown_parameter`, a body member its schema forbids `unknown_field`, any other
 * rule `validation_failed`. `context` is the request part (`body`, `params`…).
 */
export function firstProblem(context: string, errors: readonly Problem[]): ProblemTarget | undefined {
  const problem = settleChoices(errors.slice(0, MAX_ERRORS))[0];
  if (problem === undefined || !/^[a-z]+$/.test(context) || context === 'request')
    return problem === undefined ? undefined : { code: 'validation_failed' };
  const path = fieldPath(problem.instancePath);
  const params = problem.params as Record<string, unknown>;
  if (problem.keyword === 'additionalProperties') {
    // As the message shows it: a name from the request is cut at NAME_SHOWN characters.
    const name = shortName(String(params.additionalProperty));
    return { code: context === 'querystring' && path === '' ? 'unknown_parameter' : 'unknown_field', field: fieldName(context, path, name) };
  }
  const field = fieldName(context, path, problem.keyword === 'required' ? String(params.missingProperty) : undefined);
  return { code: context === 'params' ? 'invalid_id' : 'validation_failed', field };
}

/** Stands, last in a list of problems, for the ones past MAX_ERRORS, which were not worded (nor counted). */
const UNCOUNTED = '\u0000';

/** The problems of one request part or row, worded, without repeats, in the order found. */
export function validationProblems(context: string, errors: readonly Problem[]): string[] {
  const worded = [...new Set(settleChoices(errors.slice(0, MAX_ERRORS)).map((problem) => sentence(context, problem)))];
  return errors.length > MAX_ERRORS ? [...worded, UNCOUNTED] : worded;
}

/** Problems as one message: the first MAX_PROBLEMS, then how many more there are ("at least", past MAX_ERRORS). */
export function joinProblems(problems: readonly string[]): string {
  const uncounted = problems.includes(UNCOUNTED);
  const worded = problems.filter((problem) => problem !== UNCOUNTED);
  const shown = worded.slice(0, MAX_PROBLEMS).join('; ');
  const more = worded.length - MAX_PROBLEMS;
  if (more <= 0) return uncounted ? `${shown}; and more problems` : shown;
  return `${shown}; and ${uncounted ? 'at least ' : ''}${count(more, 'more problem')}`;
}

/**
 * The message for a row of an import (`line 17`): "line 17: name must not be empty; id must be an integer".
 */
export function describeRowProblems(row: string, errors: readonly Problem[] | null | undefined): string {
  const problems = validationProblems(row, errors ?? []);
  return `${row}: ${problems.length === 0 ? 'the row is not valid' : joinProblems(problems)}`;
}
