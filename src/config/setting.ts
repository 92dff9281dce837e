import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * One setting of the service: the environment variable, the schema (type, bounds, default, meaning) and,
 * where the text needs more than a number, a word or a comma list, a parser. The schema is the rule: the
 * value read from the text is validated by it (read.ts), every bound, pattern, list of words and item
 * count it declares, so the table and the checks cannot drift apart.
 */
export interface Setting<S extends TSchema = TSchema> {
  env: string;
  /** Type, bounds, `default` and `description` (docs/configuration.md's "Meaning": Markdown, links relative to docs/); `itemName` names an array's items in messages. */
  schema: S;
  /** Text to value where the schema's type will not do; throws an Error whose message says what is wrong. */
  parse?: (text: string) => Static<S>;
  /** A default computed from the settings above it or the machine, when the schema's `default` will not do. */
  defaultFrom?: (earlier: Readonly<Record<string, unknown>>) => Static<S>;
  /** How docs/configuration.md shows a computed default. */
  docDefault?: string;
  /** The value is a secret: no message ever repeats it. */
  secret?: boolean;
}

export const int = (minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Integer({ minimum, maximum, default: fallback, description });

export const oneOf = <T extends string>(values: readonly T[], fallback: T, description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { default: fallback, description },
  );

/** Comma-separated items, trimmed; an empty item is refused (a stray comma is a typo, not a value). */
export function commaList(text: string, itemName: string): string[] {
  return text.split(',').map((raw, i) => {
    const item = raw.trim();
    if (item === '') throw new Error(`${itemName} ${i + 1} is empty (${itemName}s are separated by commas)`);
    return item;
  });
}
