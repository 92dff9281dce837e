import { EVENT_TYPES } from '../../src/model/events.js';
import { newId } from '../../src/model/ids.js';
import type { Store } from '../../src/store/store.js';
import type { NewEndpointRecord } from '../../src/store/webhook-store.js';

// What the store contract suites share: a new endpoint record, a store opened and closed around a check.

/** A new endpoint record, subscribed to every event unless told otherwise. */
export function endpoint(overrides: Partial<NewEndpointRecord> = {}): NewEndpointRecord {
  return {
    id: newId('ep'),
    url: 'https://hooks.example/plants',
    events: [...EVENT_TYPES],
    secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAx',
    createdAt: Date.now(),
    ...overrides,
  };
}

/** Runs `check` against a fresh store and closes it whatever happens. */
export async function withStore(open: () => Promise<Store>, check: (store: Store) => Promise<void>): Promise<void> {
  const store = await open();
  try {
    await check(store);
  } finally {
    await store.close();
  }
}
