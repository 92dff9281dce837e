/** Which media types request bodies come in: the JSON parser's (json.ts), a 415's list, the OpenAPI document's. */

/** The media types whose bodies are JSON: plain JSON, and JSON merge patches (RFC 7396) for PATCH. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json'];

/**
 * The media types a route takes its body in, as the OpenAPI document and a 415 name them: those it
 * documents itself (a route that reads its body as a stream: imports), else JSON, and for PATCH a merge
 * patch first.
 */
export function bodyMediaTypes(method: string, documented: Record<string, unknown> | undefined): string[] {
  if (documented !== undefined) return Object.keys(documented);
  return method === 'PATCH' ? ['application/merge-patch+json', 'application/json'] : ['application/json'];
}
