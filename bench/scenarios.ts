import { FEATURES } from './scenarios/features.js';
import { READS } from './scenarios/reads.js';
import type { Scenario } from './scenarios/scenario.js';
import { SEARCH } from './scenarios/search.js';
import { UNDER_WRITES } from './scenarios/under-writes.js';
import { WEBHOOKS } from './scenarios/webhooks.js';
import { WRITES } from './scenarios/writes.js';

export type { Scenario } from './scenarios/scenario.js';

/**
 * Every scenario of `npm run bench`, in the order they run (a full run: all; `--only=<keys>`: those), one
 * file of bench/scenarios/ per kind. Besides these, `idle` (bench/idle.ts) and `import1m` (bench/import.ts)
 * are measured by the runner itself.
 */
export const SCENARIOS: Scenario[] = [...WRITES, ...WEBHOOKS, ...FEATURES, ...READS, ...SEARCH, ...UNDER_WRITES];

const keys = SCENARIOS.map((s) => s.key);
const twice = keys.filter((key, i) => keys.indexOf(key) !== i);
if (twice.length > 0) throw new Error(`bench scenarios: a key used twice: ${twice.join(', ')}`);
