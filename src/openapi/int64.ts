/**
 * What the OpenAPI document says of int64 values written as JSON strings (docs/api.md, "Ids for
 * JavaScript"): an answer to a request with `Prefer: int64=string` (said by `Preference-Applied`), a body
 * sent with it, and a delivery to a webhook endpoint registered with `"int64": "string"` write every
 * `format: int64` value as a string of its digits. The schemas keep the JSON integer, the specification's
 * and the default (the client package's types are made from them); each int64 schema names its string form
 * in `x-int64-string`, which a contract checker applies to the answers that say the preference was applied
 * (test/openapi/conformance.ts), and every operation whose answers hold int64 values declares `Prefer`.
 */

/** The extension keyword on each int64 schema. */
const EXTENSION = 'x-int64-string';

/** The string form of an int64: its digits, as the service writes them (plain decimal, no `+`, no leading zero). */
const INT64_STRING = { type: 'string', pattern: '^(0|-?[1-9][0-9]{0,18})$' } as const;

/** A schema as the document shows it, with its string form when it is an int64's. */
export function withInt64String(shown: Record<string, unknown>): Record<string, unknown> {
  return shown.type === 'integer' && shown.format === 'int64' ? { ...shown, [EXTENSION]: INT64_STRING } : shown;
}

/** A parameter's schema has no string form to name: a path, a query and a header are text already. */
export function withoutInt64String(shown: Record<string, unknown>): Record<string, unknown> {
  const { [EXTENSION]: _, ...rest } = shown;
  const items = rest.items as Record<string, unknown> | undefined;
  return items === undefined ? rest : { ...rest, items: withoutInt64String(items) };
}

const PREFERENCE =
  '`int64=string`: every `format: int64` value of the answer written as a JSON string (its `x-int64-string`), answered with `Preference-Applied: int64=string`';

/** The header parameters of an operation whose answers hold int64 values: Prefer declared, saying int64=string. */
export function withPreferInt64(parameters: Array<{ name: string; in: string; description?: string | undefined }>): object[] {
  const prefer = parameters.find((p) => p.in === 'header' && p.name === 'prefer');
  if (prefer === undefined)
    return [...parameters, { name: 'prefer', in: 'header', required: false, description: PREFERENCE, schema: { type: 'string' } }];
  return parameters.map((p) => (p === prefer ? { ...p, description: `${(p.description ?? '').replace(/\.$/, '')}; ${PREFERENCE}` } : p));
}
