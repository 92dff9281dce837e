/**
 * Unicode case folding for name search (GET /plants?q=): `q` matches a name when fold(name) contains
 * fold(q). Built from the Unicode case mappings (ICU's, through toUpperCase and toLowerCase) rather than
 * a table of our own: upper then lower, twice, gives the full case folding of Unicode's CaseFolding.txt
 * (statuses C and F) for every character but two, which are mended by hand:
 * - σ: lowercasing is context-dependent (Final_Sigma: Σ at the end of a word becomes ς), and folding
 *   is not, so ς becomes σ afterwards;
 * - ı (dotless i): upper then lower makes it i, where folding keeps it apart from i and I, so it is
 *   left out of the mapping.
 * Two rounds because ẞ lowercases to ß, which folds to ss only on the next upper-then-lower. Checked
 * over every code point against another implementation of CaseFolding.txt (Python's str.casefold):
 * the same classes, but for characters newer than its Unicode version. Folding is context-free, so a
 * substring folds to a substring of the fold. É and é fold alike, ß and SS, 𐐀 and 𐐨 (outside the BMP).
 *
 * PostgreSQL folds with the same steps in SQL (plant_fold() in postgres/migrations.ts, with the ICU root
 * collation), so both stores agree wherever their ICU versions know the same characters.
 */

/** Printable ASCII only: toLowerCase is the whole fold (anything else takes the full path, which agrees). */
const ASCII = /^[ -~]*$/;
const DOTLESS_I = 'ı';

function mapped(text: string): string {
  return text.toUpperCase().toLowerCase().toUpperCase().toLowerCase();
}

export function foldCase(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase();
  const parts = text.split(DOTLESS_I);
  return (parts.length === 1 ? mapped(text) : parts.map(mapped).join(DOTLESS_I)).replaceAll('ς', 'σ');
}
