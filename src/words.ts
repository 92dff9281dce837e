/** Lists and counts in words, for messages people read (the API's errors, the CLI). */

/** "a", "a or b", "a, b or c". */
export function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)!}`;
}

/** "1 row", "2 rows", "0 rows". */
export function count(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}

/** "a", "a and b", "a, b and c". */
export function andList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)!}`;
}

/**
 * How many edits make `a` into `b`: a character added, removed, replaced, or two neighbours swapped
 * ("nmae" is one edit from "name"), the optimal string alignment distance. Compared as given: callers
 * lower-case first when case should not count.
 */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      row.push(best);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length]!;
}

/** Whether `a` is one edit or less from `b` (editDistance), case aside: a typo of it. Long names cost nothing: their lengths tell first. */
export function oneEditAway(a: string, b: string): boolean {
  return Math.abs(a.length - b.length) <= 1 && editDistance(a.toLowerCase(), b.toLowerCase()) <= 1;
}
