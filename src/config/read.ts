import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { commaList, type Setting } from './setting.js';

/**
 * A setting's text to its value, validated by the setting's own schema: the text is converted by the
 * schema's type (or the setting's parse), then every constraint the schema declares is checked by Ajv,
 * compiled once per setting. Nothing here knows any particular setting.
 */

/** Annotations the settings' schemas may carry for messages: what an array's items are called, what a pattern means. */
const ANNOTATIONS = ['itemName', 'patternMeaning'];

// No check of each schema against Ajv's meta-schema here: compiling that took a tenth of a second of every
// start, the service's and each CLI command's; test/config/schemas.test.ts checks every setting's schema.
const ajv = new Ajv({ allErrors: false, strict: true, verbose: true, validateSchema: false });
ajv.addVocabulary(ANNOTATIONS);

/**
 * Whether `schema` is a valid schema for this module's Ajv (its meta-schema, its vocabulary); what is wrong
 * if not. For the tests.
 * @internal
 */
export function schemaProblems(schema: TSchema): string | undefined {
  return ajv.validateSchema(schema) ? undefined : ajv.errorsText(ajv.errors);
}

const validators = new WeakMap<TSchema, ValidateFunction>();

function validatorOf(schema: TSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

interface SchemaShape {
  type?: string;
  items?: SchemaShape;
  itemName?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  patternMeaning?: string;
  anyOf?: Array<{ const?: unknown; itemName?: string }>;
}

/** The value a setting's text spells, by its schema's type: whole numbers, numbers, true/false words, comma lists, text. */
function byType(schema: SchemaShape, text: string): unknown {
  switch (schema.type) {
    case 'integer':
      if (!/^\d+$/.test(text)) throw new Error(`must be a whole number, got "${text}"`);
      return Number(text);
    case 'number':
      if (!/^\d+(\.\d+)?$/.test(text)) throw new Error(`must be a number, got "${text}"`);
      return Number(text);
    case 'boolean': {
      const word = text.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(word)) return true;
      if (['false', '0', 'no', 'off'].includes(word)) return false;
      throw new Error(`must be true or false, got "${text}"`);
    }
    case 'array': {
      const name = schema.itemName ?? 'item';
      return commaList(text, name).map((item, i) => {
        try {
          return byType(schema.items ?? {}, item);
        } catch (error) {
          throw new Error(`${name} ${i + 1} ${error instanceof Error ? error.message : String(error)}`);
        }
      });
    }
    default:
      return text;
  }
}

function bounds(schema: SchemaShape): string {
  const low =
    schema.minimum !== undefined ? `at least ${schema.minimum}` : schema.exclusiveMinimum !== undefined ? `more than ${schema.exclusiveMinimum}` : '';
  const high =
    schema.maximum !== undefined ? `at most ${schema.maximum}` : schema.exclusiveMaximum !== undefined ? `less than ${schema.exclusiveMaximum}` : '';
  if (schema.minimum !== undefined && schema.maximum !== undefined) return `must be between ${schema.minimum} and ${schema.maximum}`;
  return `must be ${[low, high].filter((part) => part !== '').join(' and ')}`;
}

/** What a failed constraint means, in words; `got` shows the value unless it is a secret. */
function describe(errors: ErrorObject[], root: SchemaShape, value: unknown, text: string, secret: boolean): string {
  // A choice among words fails in each branch first: name the whole choice. A choice among kinds of value
  // (a word, a number, a list) is judged by the branch of the value's kind.
  const choice = errors.find((e) => e.keyword === 'anyOf');
  const words = ((choice?.parentSchema ?? {}) as SchemaShape).anyOf?.every((branch) => 'const' in branch) === true;
  const ofKind = errors.find((e) => e !== choice && e.keyword !== 'type' && e.keyword !== 'const');
  const error = (choice && words ? choice : (ofKind ?? errors[0]))!;
  const listName = root.itemName ?? root.anyOf?.find((branch) => branch.itemName)?.itemName ?? 'item';
  const schema = (error.parentSchema ?? {}) as SchemaShape;
  const params = error.params as Record<string, unknown>;
  const index = /^\/(\d+)$/.exec(error.instancePath);
  const where = index ? `${listName} ${Number(index[1]) + 1} ` : '';
  let rule: string;
  switch (error.keyword) {
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      rule = bounds(schema);
      break;
    case 'minLength':
      rule = params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters long`;
      break;
    case 'maxLength':
      rule = `must be at most ${String(params.limit)} characters long`;
      break;
    case 'pattern':
      rule = schema.patternMeaning ?? `must match ${String(params.pattern)}`;
      break;
    case 'minItems':
    case 'maxItems':
      rule = `must have ${error.keyword === 'minItems' ? 'at least' : 'at most'} ${String(params.limit)} ${listName}${listName.endsWith('s') ? 'es' : 's'}`;
      break;
    case 'anyOf':
      rule = `must be one of ${(schema.anyOf ?? []).map((branch) => String(branch.const)).join(', ')}`;
      break;
    default:
      rule = error.message ?? 'is not valid';
  }
  if (secret) return `${where}${rule}`;
  // The text as given for the whole value (a parse may have changed its case), the item for an item, the count for a list.
  const got =
    error.keyword === 'minItems' || error.keyword === 'maxItems'
      ? (value as unknown[]).length
      : index
        ? error.data
        : typeof value === 'string'
          ? text
          : value;
  return `${where}${rule}, got ${typeof got === 'string' ? `"${got}"` : String(got)}`;
}

/** The value of a setting given as `text`; throws an Error saying what is wrong (never the value of a secret). */
export function readSetting(setting: Setting, text: string): unknown {
  const root = setting.schema as SchemaShape;
  let value: unknown;
  try {
    value = setting.parse ? setting.parse(text) : byType(root, text);
  } catch (error) {
    // A secret's parse and byType never put the text in a message; the item messages above name items by number.
    if (setting.secret && !setting.parse) throw new Error((error instanceof Error ? error.message : String(error)).replace(/, got ".*"$/, ''));
    throw error;
  }
  const validate = validatorOf(setting.schema);
  if (!validate(value)) throw new Error(describe(validate.errors ?? [], root, value, text, setting.secret === true));
  return value;
}
