import { parseKeyPairsIntoRecord } from '@opentelemetry/core';

/**
 * Standard variables the SDK reads itself, and drops without a word when it cannot read them (its own debug
 * line, which the service does not log): said at start instead, as a warning naming the variable, never
 * repeating its text (a collector's key may be in it). The SDK goes on as it would; only the word is added.
 */

/** The longest attribute name or value the SDK's reader of OTEL_RESOURCE_ATTRIBUTES takes. */
const ATTRIBUTE_LENGTH = 255;

/**
 * The OTLP headers variables: an entry that is not `name=value` (percent-encoded) is dropped alone, so
 * that a collector's key written `Authorization: Bearer …` is never sent and every export is refused.
 */
function unreadHeaders(name: string, text: string): string[] {
  const entries = text.split(',');
  return entries.flatMap((entry, i) =>
    entry.trim() !== '' && Object.keys(parseKeyPairsIntoRecord(entry)).length === 0
      ? [`${name}: entry ${i + 1} of ${entries.length} is not a header as name=value (percent-encoded), and is not sent`]
      : [],
  );
}

/** True when the SDK reads the entry (its rule: one `=`, a name, both percent-decodable, 255 characters at most). */
function readableAttribute(entry: string): boolean {
  const parts = entry.split('=');
  if (parts.length !== 2 || parts[0]!.trim() === '') return false;
  try {
    return parts.every((part) => decodeURIComponent(part.trim()).length <= ATTRIBUTE_LENGTH);
  } catch {
    return false;
  }
}

/** OTEL_RESOURCE_ATTRIBUTES: one entry the SDK cannot read and the whole variable is dropped (the specification's rule). */
function unreadAttributes(text: string): string[] {
  const entries = text.split(',').filter((entry) => entry.trim() !== '');
  const bad = entries.findIndex((entry) => !readableAttribute(entry));
  if (bad === -1) return [];
  return [
    `OTEL_RESOURCE_ATTRIBUTES: entry ${bad + 1} of ${entries.length} is not an attribute as name=value (percent-encoded, 255 characters at most), so none of them is kept`,
  ];
}

export function warnOfUnreadVariables(warn: (message: string) => void, env: NodeJS.ProcessEnv = process.env): void {
  const problems = [
    ...unreadHeaders('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS ?? ''),
    ...unreadHeaders('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? ''),
    ...unreadAttributes(env.OTEL_RESOURCE_ATTRIBUTES ?? ''),
  ];
  for (const problem of problems) warn(`tracing: ${problem}`);
}
