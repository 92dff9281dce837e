/**
 * How far a search walks along the order of its page, checking each name against q, before it finds the
 * page through the trigram index instead (both stores): at most 64 plants for each one the page takes, and
 * SEARCH_WALK_MAX in all.
 *
 * Through the index, a page costs what reading every name that holds q's trigrams costs, whatever the page:
 * in a name order those are all sorted for a page of 50, and a q whose trigrams many names hold but few
 * hold whole reads them all in any order. Along the order, a page costs what it walks past, and a q that
 * many names hold fills a page soon (one name in ten: about 500 walked for 50). Neither cost is known
 * before reading: how many names hold q, and where they stand in the order (names that start alike stand
 * together, so a common word may stand after most of the names). So the walk goes first, and stops at
 * this bound: a page it fills is the answer, exactly (every plant it passed was checked, in the order, in
 * the read's snapshot); otherwise the index finds the page as it would have without the walk, which then
 * cost a few milliseconds at most (measured in bench/RESULTS.md). A crafted q is held to the same bounds
 * as before, and this one.
 */
export function searchWalk(take: number): number {
  return Math.min(SEARCH_WALK_MAX, 64 * take);
}

/** The most plants a search walks before the index (searchWalk). */
const SEARCH_WALK_MAX = 16_384;
