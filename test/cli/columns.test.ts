import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columns, padColumns } from '../../src/cli/columns.js';
import { printTable, type Sink } from '../../src/cli/output.js';
import { plantPrinter } from '../../src/cli/plant-output.js';

/**
 * Tables line up in a terminal's columns, not in UTF-16 code units: a CJK name takes two columns a
 * character, an emoji two whatever its code points, a combining mark none. (A table of such names came out
 * ragged, each row's later columns pushed by how its name was encoded.)
 */

class Terminal implements Sink {
  readonly isTTY = true;
  text = '';
  write(chunk: string | Uint8Array): boolean {
    this.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  }
}

/** The terminal column at which each line's `needle` begins. */
function columnsOf(text: string, needle: string): number[] {
  return text
    .split('\n')
    .filter((line) => line.includes(needle))
    .map((line) => columns(line.slice(0, line.indexOf(needle))));
}

describe('columns', () => {
  it('counts printable ASCII one a character', () => {
    assert.equal(columns(''), 0);
    assert.equal(columns('Fern 12'), 7);
  });

  it('counts CJK, kana, Hangul and fullwidth forms two', () => {
    assert.equal(columns('盆栽'), 4);
    assert.equal(columns('さくら'), 6);
    assert.equal(columns('선인장'), 6);
    assert.equal(columns('ＡＢ'), 4);
    assert.equal(columns('𠀋'), 2, 'a supplementary ideograph: two code units, two columns');
  });

  it('counts an emoji two, however many code points make it', () => {
    assert.equal(columns('🌵'), 2);
    assert.equal(columns('👍🏽'), 2, 'a skin tone');
    assert.equal(columns('🇯🇵'), 2, 'a flag');
    assert.equal(columns('👨‍👩‍👧'), 2, 'a family joined by ZWJ');
    assert.equal(columns('☺️'), 2, 'a text symbol asked for as emoji (VS16)');
    assert.equal(columns('☺'), 1, 'the same symbol as text');
  });

  it('counts a combining mark none, and accented or other narrow letters one', () => {
    assert.equal(columns('Cafe\u0301'), 4);
    assert.equal(columns('Café'), 4);
    assert.equal(columns('Ωμέγα'), 5);
    assert.equal(columns('\u0301'), 0);
  });

  it('pads to columns, and leaves a text as wide or wider as it is', () => {
    assert.equal(padColumns('盆栽', 6), '盆栽  ');
    assert.equal(padColumns('盆栽', 4), '盆栽');
    assert.equal(padColumns('盆栽', 3), '盆栽');
  });
});

describe('tables in a terminal line up whatever the names', () => {
  const names = ['Fern', '盆栽 bonsai', 'Cactus 🌵', 'Cafe\u0301 plant', '👨‍👩‍👧 family'];

  it('printTable', () => {
    const tty = new Terminal();
    printTable(
      ['NAME', 'TAG'],
      names.map((name) => [name, 'T']),
      tty,
    );
    // Every row ends in its one-column tag: each line as wide as the heading's.
    const widths = tty.text.replace('TAG', 'T').trimEnd().split('\n').map(columns);
    assert.equal(widths.length, names.length + 1);
    assert.equal(new Set(widths).size, 1, tty.text);
  });

  it('plantPrinter', async () => {
    const tty = new Terminal();
    const table = plantPrinter('table', tty);
    await table.add(names.map((name, i) => ({ id: i + 1, name, tag: 'green' })));
    table.end();
    const at = columnsOf(tty.text.replace('TAG', 'green'), 'green');
    assert.equal(at.length, names.length + 1, tty.text);
    assert.equal(new Set(at).size, 1, tty.text);
  });
});
