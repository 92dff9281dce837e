/** The trigram tokenizer indexes runs of three characters (code points): a shorter q has none to look up. */
const TRIGRAM = 3;

/**
 * Trigrams of q looked up in the index at most: a few make the names that hold them all few, and a long
 * or repetitive q then reads a few of the index's lists rather than every one of its trigrams' lists with
 * their positions (a phrase of 98 trigrams over names of 241 letters held the event loop for seconds).
 */
export const MAX_TERMS = 4;

/**
 * The trigrams of a folded q that a search looks up: at most MAX_TERMS distinct ones, those of the most
 * distinct characters first (in names of repeated letters, "aaa" is in every name many times over, "aab"
 * once), and those of fewer only to make two, spread over q in their order within it. Empty when q is shorter than a trigram. Every name that
 * holds q holds them all; the names found are then checked against q itself.
 */
export function searchTerms(folded: string): string[] {
  const chars = [...folded];
  const trigrams = [...new Set(chars.slice(0, Math.max(0, chars.length - TRIGRAM + 1)).map((_, i) => chars.slice(i, i + TRIGRAM).join('')))];
  const chosen: string[] = [];
  // Trigrams of fewer distinct characters only while fewer than two are chosen: they are the commonest.
  for (let distinct = TRIGRAM; distinct >= 1 && chosen.length < 2; distinct--) {
    const group = trigrams.filter((trigram) => new Set(trigram).size === distinct);
    chosen.push(...spread(group, MAX_TERMS - chosen.length));
  }
  return chosen;
}

/** `count` of the items, evenly spaced from the first to the last (all of them when there are no more). */
function spread<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  if (count === 1) return [items[0]!];
  return Array.from({ length: count }, (_, i) => items[Math.round((i * (items.length - 1)) / (count - 1))]!);
}
