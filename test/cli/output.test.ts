import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeControls, print, printJson, printStream, printTable, say, shown, type Sink } from '../../src/cli/output.js';
import { plantPrinter } from '../../src/cli/plant-output.js';

/**
 * The CLI's output layer: stored text reaches a terminal with its control characters escaped, and a pipe
 * or a file with its exact bytes. A stand-in stream says whether it is a terminal (isTTY), as
 * process.stdout does.
 */

class FakeStream implements Sink {
  readonly chunks: Array<string | Uint8Array> = [];
  constructor(readonly isTTY: boolean) {}
  write(chunk: string | Uint8Array): boolean {
    this.chunks.push(chunk);
    return true;
  }
  get text(): string {
    return this.chunks.map((c) => (typeof c === 'string' ? c : Buffer.from(c).toString('utf8'))).join('');
  }
  get bytes(): Buffer {
    return Buffer.concat(this.chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));
  }
}

const terminal = () => new FakeStream(true);
const pipe = () => new FakeStream(false);

/** A name as a plants:write client could choose it: erase the line, back to its start, red, a C1 CSI, a bell, DEL. */
const HOSTILE = 'Fern\u001b[2K\rOK \u001b[31mred\u001b[0m \u009b1m\u0007\u007f\ttab\nline';

async function* chunks(...parts: Array<string | Uint8Array>): AsyncGenerator<string | Uint8Array> {
  yield* parts;
}

describe('escapeControls', () => {
  it('escapes every C0 and C1 character and DEL: \\t \\n \\r, \\xHH for C0 and DEL, \\u00HH for C1', () => {
    assert.equal(escapeControls(HOSTILE), 'Fern\\x1b[2K\\rOK \\x1b[31mred\\x1b[0m \\u009b1m\\x07\\x7f\\ttab\\nline');
    assert.equal(escapeControls('\u0000\u0001\u001f\u0080\u009f'), '\\x00\\x01\\x1f\\u0080\\u009f');
  });

  it('escapes the format characters (Cf) and the line and paragraph separators: bidi controls, invisible characters', () => {
    // U+202E turns the rest of a line around, U+2066-U+2069 isolate, U+061C marks Arabic letters, U+200B, U+2060
    // and U+FEFF show as nothing, U+00AD as nothing mid-word; U+2028 and U+2029 break lines in some terminals.
    assert.equal(
      escapeControls('a\u202eb\u2066c\u2067d\u2068e\u2069f\u061cg\u200bh\u200di\u2060j\ufeffk\u00adl\u2028m\u2029n'),
      'a\\u202eb\\u2066c\\u2067d\\u2068e\\u2069f\\u061cg\\u200bh\\u200di\\u2060j\\ufeffk\\u00adl\\u2028m\\u2029n',
    );
    // Past U+FFFF (the tag characters, U+E0001…), whole code points, never halves.
    assert.equal(escapeControls('x\u{e0001}\u{e0041}y'), 'x\\u{e0001}\\u{e0041}y');
    assert.equal(escapeControls('initial\u202e', { keepLineEnds: true }), 'initial\\u202e');
  });

  it('leaves everything else as it is: printable ASCII, backslashes, accents, emoji, spaces (U+00A0 too) and beyond', () => {
    const text = 'Monstera deliciosa \\x1b é Ü 日本 🌿 \u00a0 \u3000 שלום مرحبا';
    assert.equal(escapeControls(text), text);
  });

  it('with keepLineEnds, keeps LF and CRLF (a line the command writes ends so) but escapes a lone CR', () => {
    assert.equal(escapeControls('a\nb\r\nc\rd\u001b', { keepLineEnds: true }), 'a\nb\r\nc\\rd\\x1b');
  });
});

describe('the output layer, on a terminal and to a pipe', () => {
  it('shown and print escape on a terminal only; a pipe gets the text as it is', () => {
    assert.equal(shown(HOSTILE, terminal()), escapeControls(HOSTILE));
    assert.equal(shown(HOSTILE, pipe()), HOSTILE);
    const tty = terminal();
    print(`${HOSTILE}\n`, tty);
    assert.equal(tty.text, `${escapeControls(HOSTILE, { keepLineEnds: true })}\n`);
    const piped = pipe();
    print(`${HOSTILE}\n`, piped);
    assert.equal(piped.text, `${HOSTILE}\n`);
  });

  it('say writes one line, escaped on a terminal (a message quoting stored text)', () => {
    const tty = terminal();
    say('plant-store: no active token with id or name "\u001b[2Kx"', tty);
    assert.equal(tty.text, 'plant-store: no active token with id or name "\\x1b[2Kx"\n');
  });

  it("printTable escapes each cell on a terminal, measured as shown; a pipe's cells are exact", () => {
    const tty = terminal();
    printTable(
      ['ID', 'NAME'],
      [
        ['1', '\u001b[31mred'],
        ['22', 'ok'],
      ],
      tty,
    );
    assert.equal(tty.text, 'ID  NAME\n1   \\x1b[31mred\n22  ok\n');
    const piped = pipe();
    printTable(['ID', 'NAME'], [['1', 'a\rb']], piped);
    assert.equal(piped.text, 'ID  NAME\n1   a\rb\n');
  });

  it('printJson: JSON escapes C0 itself; a terminal also gets C1 and DEL escaped, a pipe the exact JSON', () => {
    const value = { id: 9223372036854775807n, name: HOSTILE };
    const tty = terminal();
    printJson(value, tty);
    assert.doesNotMatch(tty.text, /(?!\n)\p{Cc}/u);
    assert.match(tty.text, /"id": 9223372036854775807,/);
    assert.match(tty.text, /\\u001b\[2K\\rOK .*\\u009b1m\\u0007\\x7f\\ttab\\nline/);
    const piped = pipe();
    printJson(value, piped);
    assert.ok(piped.text.includes('\u009b1m\\u0007\u007f'), 'the C1 character and DEL as stored');
  });

  it('printStream gives a pipe the exact bytes, chunk for chunk', async () => {
    const bytes = [Buffer.from('id,name\r\n1,"a\u001b[2K'), Buffer.from([0xc2]), Buffer.from([0x9b, 0x0d, 0x0a])];
    const piped = pipe();
    await printStream(chunks(...bytes), piped);
    assert.deepEqual(piped.bytes, Buffer.concat(bytes));
  });

  it('printStream on a terminal escapes once whole a character split between chunks (UTF-8, CRLF)', async () => {
    const tty = terminal();
    // U+009B is C2 9B in UTF-8, split; a CRLF split after its CR; a lone CR at the very end.
    await printStream(
      chunks(Buffer.from('id,name\r'), Buffer.from('\n1,a\u001b[2K\r'), Buffer.from('b'), Buffer.from([0xc2]), Buffer.from([0x9b, 0x0d])),
      tty,
    );
    assert.equal(tty.text, 'id,name\r\n1,a\\x1b[2K\\rb\\u009b\\r');
  });

  it('printStream of CSV on a terminal escapes the line ends inside quoted fields, even across chunks, and keeps those between records', async () => {
    const tty = terminal();
    // A name holding a CRLF and an LF (a forged row), split over chunks inside its quotes; "" is a quote inside them.
    await printStream(
      chunks(Buffer.from('id,name,tag\r\n16,"Fern\r'), Buffer.from('\n99,Fake ""plant"",spoof\n'), Buffer.from('x",\r\n17,Ivy,\r\n')),
      tty,
      { csv: true },
    );
    assert.equal(tty.text, 'id,name,tag\r\n16,"Fern\\r\\n99,Fake ""plant"",spoof\\nx",\r\n17,Ivy,\r\n');
    const piped = pipe();
    await printStream(chunks(Buffer.from('1,"a\nb",\r\n')), piped, { csv: true });
    assert.equal(piped.text, '1,"a\nb",\r\n', 'a pipe gets the exact bytes');
  });

  it('plantPrinter: NDJSON lines as exports write them, or a table with a heading, escaped on a terminal', async () => {
    const plants = [
      { id: 1, name: 'Fern', tag: 'green' },
      { id: 9223372036854775807n, name: '\u001b[31mred\u009b', tag: '\r' },
    ];
    const ndjson = terminal();
    const lines = plantPrinter('ndjson', ndjson);
    await lines.add(plants);
    lines.end();
    assert.equal(ndjson.text, '{"id":1,"name":"Fern","tag":"green"}\n{"id":9223372036854775807,"name":"\\u001b[31mred\\u009b","tag":"\\r"}\n');
    const piped = pipe();
    const exact = plantPrinter('ndjson', piped);
    await exact.add(plants);
    assert.ok(piped.text.includes('red\u009b'), 'the exact text to a pipe');

    const tty = terminal();
    const table = plantPrinter('table', tty);
    await table.add(plants);
    await table.add([{ id: 2, name: 'a name longer than the first page had' }]);
    table.end();
    assert.equal(
      tty.text,
      'ID                   NAME               TAG\n' +
        '1                    Fern               green\n' +
        '9223372036854775807  \\x1b[31mred\\u009b  \\r\n' +
        '2                    a name longer than the first page had\n',
    );
    const empty = terminal();
    plantPrinter('table', empty).end();
    assert.equal(empty.text, 'ID  NAME  TAG\n');
  });
});
