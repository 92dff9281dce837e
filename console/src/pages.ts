import type { ErrorBody } from '@plant-store/client';
import { useCallback, useRef, useState } from 'preact/hooks';
import { explain, nextLink, unreachable } from './api.js';

/** One page of a list as the typed client answers it: the items, or the service's error; and the response (its Link header). */
type PageAnswer<T> = { data: T[]; error?: undefined; response: Response } | { data?: undefined; error: ErrorBody; response: Response };

/**
 * A list the service hands out in pages linked by a `cursor` (rel="next"): load() reads the first page, in place
 * of the list; load(more) reads the next one and adds it; refresh() reads the list again from its start, as
 * many as it shows (`atLeast`, which fetchPage may ask as its limit), so that a list a person has lengthened
 * with More stays as long (skipped while a More is out). A refusal or a service that did not answer becomes
 * `problem` (kept, with its setter, for the view's other requests to use too); a page read well clears it.
 * When loads overlap, the latest one's answer is shown and the others' are dropped. `load` and `refresh`
 * are the same functions on every render (an effect may name them), and ask with the latest fetchPage.
 */
export function useCursorPages<T>(fetchPage: (cursor: string | undefined, atLeast?: number) => Promise<PageAnswer<T>>) {
  const [list, setList] = useState<T[] | null>(null);
  const [more, setMore] = useState<string | undefined>(undefined);
  const [problem, setProblem] = useState('');
  const latest = useRef(fetchPage);
  latest.current = fetchPage;
  const shown = useRef(0);
  shown.current = list?.length ?? 0;
  const loads = useRef(0);
  const mores = useRef(0);
  const load = useCallback(async (cursor?: string, atLeast?: number) => {
    // Only the latest load's answer is shown: a second click on More while the first loads asks for the same
    // page again, which would be added twice, and a reload answered after a More would drop its page.
    const mine = ++loads.current;
    if (cursor !== undefined) mores.current++;
    try {
      const { data, error, response } = await latest.current(cursor, atLeast);
      if (mine !== loads.current) return;
      if (error !== undefined) return setProblem(explain(error));
      setProblem('');
      setList((before) => (cursor === undefined ? data : [...(before ?? []), ...data]));
      setMore(nextLink(response));
    } catch (error) {
      if (mine === loads.current) setProblem(unreachable(error));
    } finally {
      if (cursor !== undefined) mores.current--;
    }
  }, []);
  // Not while a More is out: its page would be dropped for the refresh's, and the person's click lost.
  const refresh = useCallback(() => (mores.current > 0 ? Promise.resolve() : load(undefined, shown.current)), [load]);
  return { list, more, problem, setProblem, load, refresh };
}
