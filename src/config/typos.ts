/**
 * Environment variables that look like a misspelt setting (`DATABSE_URL`): a setting misspelt is not set,
 * and its default used without a word (a new, empty store at ./data/plant-store.db, a new first token).
 * Named at start as warnings, not refused: the environment holds other programs' variables too, and one
 * that happens to be near a setting's name must not stop the service.
 */

/** The number of single-character edits (insert, delete, replace, swap of two neighbours) from `a` to `b`, up to `limit` + 1. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const replace = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, replace);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current.push(best);
    }
    [before, previous] = [previous, current];
  }
  return previous[b.length]!;
}

/** A warning for each variable of `env` that is not a setting but is one or two edits from one (names of 6 characters or more). */
export function settingTypos(env: Readonly<Record<string, string | undefined>>, settings: readonly string[]): string[] {
  const known = new Set(settings);
  const warnings: string[] = [];
  for (const name of Object.keys(env)) {
    if (known.has(name) || !/^[A-Z][A-Z0-9_]{4,}$/.test(name)) continue;
    const near = settings.find((setting) => setting.length >= 6 && editDistance(name, setting, 2) <= 2);
    if (near !== undefined)
      warnings.push(`${name} is not a setting, and is ignored: did you mean ${near}? (docs/configuration.md lists the settings)`);
  }
  return warnings;
}
