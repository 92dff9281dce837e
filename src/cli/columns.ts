/**
 * How many columns of a terminal a text takes, for tables whose columns line up: a CJK character or an
 * emoji takes two, a combining mark none (it joins the character before it), any other character one.
 * `String.length` counts UTF-16 code units, so a table of such names came out ragged. East Asian widths
 * are taken from Unicode's wide and fullwidth blocks, what terminals draw two columns wide; a text is cut
 * into graphemes first, so that an emoji of several code points (a flag, a family, a skin tone) counts once.
 */

/** Text every terminal draws one column a code unit: printable ASCII. */
const NARROW_ONLY = /^[\x20-\x7e]*$/;
/** East Asian Wide and Fullwidth (Hangul Jamo, CJK, kana, Hangul syllables, fullwidth forms, the supplementary ideographs). */
const WIDE =
  /[\u1100-\u115f\u231a\u231b\u2329\u232a\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{1f200}-\u{1f2ff}\u{20000}-\u{3fffd}]/u;
/** An emoji drawn as one (its default presentation, or asked for by VS16). */
const EMOJI = /\p{Emoji_Presentation}|\ufe0f/u;
/** A grapheme of marks alone (one that follows a control, say): nothing to draw. */
const MARKS_ONLY = /^[\p{Mn}\p{Me}]+$/u;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export function columns(text: string): number {
  if (NARROW_ONLY.test(text)) return text.length;
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (WIDE.test(segment) || EMOJI.test(segment)) width += 2;
    else if (!MARKS_ONLY.test(segment)) width += 1;
  }
  return width;
}

/** `text` followed by spaces to `width` columns (String.padEnd pads to code units). */
export function padColumns(text: string, width: number): string {
  const missing = width - columns(text);
  return missing > 0 ? text + ' '.repeat(missing) : text;
}
