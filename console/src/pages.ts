import type { ErrorBody } from '@plant-store/client';
import { useCallback, useRef, useState } from 'preact/hooks';
import { explain, nextLink, unreachable } from './api.js';

/** One page of a list as the typed client answers it: the items, or the service's error; and the response (its Link header). */
type PageAnswer<T> = { data: T[]; error?: undefined; response: Response } | { data?: undefined; error: ErrorBody; response: Response };

/**
 * A list the service hands out in pages linked by a `cursor` (rel="next"): load() reads the first page, in place
 * of the list; load(more) reads the next one and adds it. A refusal or a service that did not answer becomes
 * `problem` (kept, with its setter, for the view's other requests to use too); a page read well clears it.
 * When loads overlap, the latest one's answer is shown and the others' are dropped.
 * `load` is the same function on every render (an effect may name it), and asks with the latest fetchPage.
 */
export function useCursorPages<T>(fetchPage: (cursor: string | undefined) => Promise<PageAnswer<T>>) {
  const [list, setList] = useState<T[] | null>(null);
  const [more, setMore] = useState<string | undefined>(undefined);
  const [problem, setProblem] = useState('');
  const latest = useRef(fetchPage);
  latest.current = fetchPage;
  const loads = useRef(0);
  const load = useCallback(async (cursor?: string) => {
    // Only the latest load's answer is shown: a second click on More while the first loads asks for the same
    // page again, which would be added twice, and a reload answered after a More would drop its page.
    const mine = ++loads.current;
    try {
      const { data, error, response } = await latest.current(cursor);
      if (mine !== loads.current) return;
      if (error !== undefined) return setProblem(explain(error));
      setProblem('');
      setList((before) => (cursor === undefined ? data : [...(before ?? []), ...data]));
      setMore(nextLink(response));
    } catch (error) {
      if (mine === loads.current) setProblem(unreachable(error));
    }
  }, []);
  return { list, more, problem, setProblem, load };
}
