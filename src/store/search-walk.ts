/**
 * How far a search walks along the order of its page, checking each name against q, before it finds the
 * page through the trigram index instead (both stores): at most 64 plants for each one the page takes, and
 * SEARCH_WALK_MAX in all.
 *
 * Through the index, a page costs what reading every name that holds q's trigrams costs, whatever the page:
 * in a name order those are all sorted for a page of 50 (20,000 names holding "fer": 5–15 ms), in id order
 * the index is read in that order, but a q whose trigrams many names hold and few hold whole reads them all
 * too. Along the order, a page costs what it walks past, and a q that many names hold fills a page soon
 * (one name in ten: about 500 walked for 50). Neither cost can be known before: how many names hold q,
 * and where they stand in the order (names that start alike stand together, so a common word may stand
 * after most of the names), can only be found by reading. So the walk goes first and stops at this bound:
 * a page it fills is the answer, exactly (every plant it passed was checked, in the order, in the read's
 * snapshot); otherwise the index finds the page as it would have without the walk, which cost at most
 * this many names more (about 0.05 µs each on SQLite, whose name indexes hold name_fold, 0.1–0.15 µs on
 * PostgreSQL: under 2.5 ms at the most). A crafted q is held to the same bounds as before.
 */
export function searchWalk(take: number): number {
  return Math.min(SEARCH_WALK_MAX, 64 * take);
}

/** The most plants a search walks before the index (searchWalk). */
const SEARCH_WALK_MAX = 16_384;
