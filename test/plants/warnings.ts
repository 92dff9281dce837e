import type { LightMyRequestResponse } from 'fastify';

// The Warnings of write answers, as the plant tests read them (unknown-fields, write-warnings).

/** The answer's Warning header values, in order ([] without one). */
export function warnings(response: LightMyRequestResponse): string[] {
  const value = response.headers.warning;
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** The Warning of an ignored field; `meant`: the known field it is one edit from, which the Warning names. */
export const ignored = (field: string, meant?: string) =>
  `299 - "unknown field \\"${field}\\" was ignored${meant === undefined ? '' : `: did you mean \\"${meant}\\"?`}"`;
