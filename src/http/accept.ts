/** Content negotiation (RFC 9110 §12.5.1), shared by the routes that answer in more than one media type. */

/** The q the Accept header gives a media type, by its most specific matching range (0: not acceptable). */
export function quality(accept: string, type: string): number {
  const [major] = type.split('/');
  let found = -1;
  let specificity = -1;
  for (const range of accept.split(',')) {
    const [media = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const level = media === type ? 2 : media === `${major}/*` ? 1 : media === '*/*' ? 0 : -1;
    if (level < 0 || level < specificity) continue;
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    specificity = level;
    found = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
  }
  return Math.max(0, found);
}
