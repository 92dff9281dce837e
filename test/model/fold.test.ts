import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { foldCase } from '../../src/model/fold.js';
import { FUZZING } from '../tier.js';

/** Every Unicode scalar value but NUL, as a one-character string. */
function* everyCharacter(): Generator<string> {
  for (let c = 1; c < 0x110000; c++) if (c < 0xd800 || c > 0xdfff) yield String.fromCodePoint(c);
}

describe('foldCase: Unicode case folding for name search', () => {
  it('folds case alike, in and beyond ASCII and the BMP', () => {
    const same: Array<[string, string]> = [
      ['FERN', 'fern'],
      ['Boston Fern', 'boston fern'],
      ['É', 'é'],
      ['ÉCHEVÉRIA', 'échevéria'],
      ['Straße', 'STRASSE'],
      ['STRAẞE', 'strasse'],
      ['ΟΔΟΣ', 'οδοσ'],
      ['οδος', 'ΟΔΟΣ'],
      ['ﬁcus', 'FICUS'],
      ['K', 'k'], // KELVIN SIGN
      ['Ω', 'ω'], // OHM SIGN
      ['ſ', 's'], // LONG S
      ['𐐀𐐁', '𐐨𐐩'], // Deseret, outside the BMP
      ['𞤀', '𞤢'], // Adlam
      ['ǅ', 'ǆ'],
      ['ᾼ', 'ᾳ'],
    ];
    for (const [a, b] of same) assert.equal(foldCase(a), foldCase(b), `${a} ~ ${b}`);
  });

  it('keeps apart what folding keeps apart', () => {
    const different: Array<[string, string]> = [
      ['ı', 'i'], // dotless i folds to itself, not to i
      ['ı', 'I'],
      ['e', 'é'], // accents are not case
      ['ss', 'ß'.normalize('NFD') + 'x'],
      ['a', 'ａ'], // fullwidth
    ];
    for (const [a, b] of different) assert.notEqual(foldCase(a), foldCase(b), `${a} !~ ${b}`);
    assert.equal(foldCase('İ'), 'i̇', 'capital I with dot: i and a combining dot');
  });

  it('is idempotent for every character', () => {
    const all = [...everyCharacter()];
    // 1024 characters at a time (folding is context-free, as the next test shows).
    for (let i = 0; i < all.length; i += 1024) {
      const once = foldCase(all.slice(i, i + 1024).join(''));
      assert.equal(foldCase(once), once, `from U+${all[i]!.codePointAt(0)!.toString(16)}`);
    }
  });

  it('is context-free: a string folds to the folds of its parts, so a substring folds to a substring', FUZZING, () => {
    // Σ lowercases by context (ς at the end of a word), ß and ẞ expand: none of it may depend on neighbours.
    const text = fc.string({ unit: fc.constantFrom('Σ', 'σ', 'ς', 'ß', 'ẞ', 'ı', 'İ', 'I', 'i', 'A', 'é', ' ', '𐐀', 'ǅ', 'ﬁ', 'x') });
    fc.assert(
      fc.property(text, text, (a, b) => foldCase(a + b) === foldCase(a) + foldCase(b)),
      { numRuns: 500 },
    );
    const any = fc.string({ unit: 'binary', maxLength: 20 });
    fc.assert(fc.property(any, any, (a, b) => foldCase(a + b) === foldCase(a) + foldCase(b)));
  });

  it('takes the ASCII fast path only where it gives what the full path would', () => {
    for (let c = 1; c < 128; c++) {
      const s = String.fromCharCode(c);
      assert.equal(foldCase(s), foldCase(`${s}é`).slice(0, -1));
    }
  });
});
