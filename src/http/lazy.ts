/**
 * A value made on its first use, then kept: what only some requests need (the docs page's bundle, the
 * console's files) is not made at start, so that a service nobody opens them in never holds them.
 */
export function once<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}
