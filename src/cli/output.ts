import { once } from 'node:events';
import { stringifyJson } from '../json/exact.js';
import { columns, padColumns } from './columns.js';

/**
 * Where the CLI prints, and how: stored text (a plant's name, a webhook's URL or description, a token's
 * name, a receiver's error) is anyone's choice, and a terminal obeys the control characters in it (ESC[2K
 * erases a line, CR returns to its start, CSI sequences colour and move), and shows the format characters
 * as nothing at all while they reorder or hide what follows (U+202E turns the rest of a line around,
 * U+200B is invisible). So on a terminal every control character (C0, DEL, C1), format character (Cf) and
 * line or paragraph separator (U+2028, U+2029) of what a command prints is shown escaped; to a pipe or a
 * file the exact bytes go, as they are stored. Every command writes through these functions, so that the
 * rule holds everywhere.
 */

/** A stream the CLI writes to: process.stdout or process.stderr, or a stand-in (tests) that says whether it is a terminal. */
export interface Sink {
  readonly isTTY?: boolean | undefined;
  write(chunk: string | Uint8Array): boolean;
}

/**
 * What a terminal does not show as itself: Unicode's control characters (Cc: C0 U+0000-U+001F, DEL U+007F,
 * C1 U+0080-U+009F), its format characters (Cf: bidi controls, zero-width characters, the soft hyphen…)
 * and the line and paragraph separators (Zl, Zp).
 */
const UNSHOWN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
/** The same, but a line feed, alone or after a carriage return, which ends a line the command itself writes. */
const UNSHOWN_BUT_LINE_ENDS = /\r\n|(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const SHORT: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function escaped(char: string): string {
  if (char === '\r\n') return char;
  const short = SHORT[char];
  if (short !== undefined) return short;
  const code = char.codePointAt(0)!;
  const hex = code.toString(16);
  // A C1 character is U+0080-U+009F, two bytes in UTF-8: \u009b says so, where \x9b would read as one byte.
  if (code < 0x80) return `\\x${hex.padStart(2, '0')}`;
  return code > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
}

/**
 * The text with what a terminal would not show as itself made visible: \t, \n and \r for those three,
 * \xHH for the other C0 characters and DEL (ESC is \x1b), \uHHHH for the C1 characters (CSI is \u009b),
 * the format characters (U+202E is \u202e, U+200B \u200b) and the separators U+2028 and U+2029, \u{HHHHH}
 * past U+FFFF (the tag characters). With `keepLineEnds`, LF and CRLF stay as they are: they end the lines
 * of a table, an export or a message, which a lone CR or an LF inside a cell or a name never does.
 */
export function escapeControls(text: string, { keepLineEnds = false } = {}): string {
  return text.replace(keepLineEnds ? UNSHOWN_BUT_LINE_ENDS : UNSHOWN, escaped);
}

/** A space other than U+0020 (U+00A0, U+2007, U+3000…): in a name an operator types, it passes for a plain space. */
const OTHER_SPACES = /(?! )\p{Zs}/gu;

/**
 * A name as a terminal should show it where it must be told from others (a token's, which `token revoke`
 * takes): what escapeControls escapes, and the spaces that pass for U+0020 too, so that "initial\u00a0",
 * made before token names refused it, does not sit in a list beside "initial" looking the same.
 */
export function distinctName(text: string, sink: Sink): string {
  return sink.isTTY ? escapeControls(text).replace(OTHER_SPACES, escaped) : text;
}

/** Text as `sink` should show it: escaped on a terminal, exact elsewhere. */
export function shown(text: string, sink: Sink, options?: { keepLineEnds?: boolean }): string {
  return sink.isTTY ? escapeControls(text, options) : text;
}

/** Writes lines of text (each ending with \n) to `sink`, escaped on a terminal; true when it takes more at once. */
export function print(text: string, sink: Sink = process.stdout): boolean {
  return sink.write(shown(text, sink, { keepLineEnds: true }));
}

/** A message on stderr (it may quote stored text: a name, an answer of the service). */
export function say(text: string, sink: Sink = process.stderr): void {
  print(`${text}\n`, sink);
}

/** Waits until `sink` takes more, when it said it was full: memory stays flat whatever the output's size. */
async function drained(sink: Sink, full: boolean, signal?: AbortSignal): Promise<void> {
  if (full && 'once' in sink) await once(sink as NodeJS.WritableStream, 'drain', { signal });
}

/**
 * CSV text for a terminal, a chunk at a time: a line end inside a quoted field is a stored name's, not one
 * the command writes, and is escaped like any other control character (else a name could pass for rows of
 * its own); those between the records stay. Whether a chunk begins inside quotes is carried over from the
 * one before (a `""` inside quotes is two quotes, leaving the state as it was).
 */
function csvForTerminal(): (text: string) => string {
  let quoted = false;
  return (text) => {
    let out = '';
    let start = 0;
    for (let at = text.indexOf('"'); at !== -1; at = text.indexOf('"', start)) {
      out += `${escapeControls(text.slice(start, at), { keepLineEnds: !quoted })}"`;
      quoted = !quoted;
      start = at + 1;
    }
    return out + escapeControls(text.slice(start), { keepLineEnds: !quoted });
  };
}

/**
 * Copies a stream (an export, the change feed) to `sink`: its exact bytes to a pipe or a file; on a
 * terminal, its text with the control characters escaped (`csv`: the text is CSV, whose quoted fields may
 * hold line ends of their own). A character split between two chunks (UTF-8, or the CR and LF of a line
 * end) is escaped once whole.
 */
export async function printStream(
  chunks: AsyncIterable<string | Uint8Array>,
  sink: Sink = process.stdout,
  { signal, csv = false }: { signal?: AbortSignal; csv?: boolean } = {},
): Promise<void> {
  if (!sink.isTTY) {
    for await (const chunk of chunks) await drained(sink, !sink.write(chunk), signal);
    return;
  }
  const show = csv ? csvForTerminal() : (text: string) => escapeControls(text, { keepLineEnds: true });
  const decoder = new TextDecoder();
  let held = '';
  for await (const chunk of chunks) {
    let text = held + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    // A CR at the end may be the first half of a CRLF: it waits for the next chunk.
    held = text.endsWith('\r') ? '\r' : '';
    if (held !== '') text = text.slice(0, -1);
    if (text !== '') await drained(sink, !sink.write(show(text)), signal);
  }
  const rest = held + decoder.decode();
  if (rest !== '') sink.write(show(rest));
}

/** Rows as a table with a heading, columns padded to their widest cell (in a terminal's columns); on a terminal, cells with their controls escaped. */
export function printTable(heading: string[], rows: string[][], sink: Sink = process.stdout): void {
  const table = [heading, ...rows.map((row) => row.map((cell) => shown(cell, sink)))];
  const widths = heading.map((_, i) => Math.max(...table.map((r) => columns(r[i] ?? ''))));
  let text = '';
  for (const row of table)
    text += `${row
      .map((cell, i) => padColumns(cell, widths[i]!))
      .join('  ')
      .trimEnd()}\n`;
  sink.write(text);
}

/**
 * Compact JSON text indented by two spaces a level, as JSON.stringify(value, null, 2) would lay it out.
 * The text is re-laid rather than re-made, so that exact int64 integers stay as the exact writer wrote them.
 */
function indentJson(text: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      if (text[i + 1] === close) {
        out += c + close;
        i++;
      } else out += `${c}\n${'  '.repeat(++depth)}`;
    } else if (c === '}' || c === ']') out += `\n${'  '.repeat(--depth)}${c}`;
    else if (c === ',') out += `,\n${'  '.repeat(depth)}`;
    else if (c === ':') out += ': ';
    else out += c;
  }
  return out;
}

/**
 * JSON, indented; ids beyond 2^53 (bigints) as exact JSON integers, as the API writes them. JSON escapes
 * the C0 characters itself; on a terminal, the C1 characters and DEL are escaped too (\u009b, as JSON would).
 */
export function printJson(value: unknown, sink: Sink = process.stdout): void {
  print(`${indentJson(stringifyJson(value))}\n`, sink);
}
