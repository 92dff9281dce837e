import assert from 'node:assert/strict';
import { getMetricsFromIterator, type PromData, type PromHistogramData, type PromMetrics } from 'prom2javascript';

/**
 * Reading metrics as Prometheus would: over HTTP, parsed by a Prometheus text-format parser from npm
 * (prom2javascript: it keeps each labelled histogram apart and refuses a malformed line or a histogram
 * whose +Inf bucket differs from its count). It reads no NaN, which the format allows and prom-client
 * writes (`Nan`) for a gauge with nothing to report: the event-loop statistics when no delay was sampled
 * since the previous scrape, the backlog when the database does not answer. Those samples are set apart
 * in `nan` (by name and labels as written) and the rest is parsed.
 */

export interface Scraped {
  status: number;
  contentType: string | null;
  text: string;
  metrics: PromMetrics;
  /** Samples whose value is NaN, as `name{labels}`. */
  nan: string[];
}

const NAN_SAMPLE = /^([^#\s][^\s]*)\s+nan$/i;

export async function parse(text: string): Promise<{ metrics: PromMetrics; nan: string[] }> {
  const nan: string[] = [];
  const lines = text.split('\n').filter((line) => {
    const match = NAN_SAMPLE.exec(line);
    if (match) nan.push(match[1]!);
    return !match;
  });
  return { metrics: await getMetricsFromIterator(lines[Symbol.iterator]()), nan };
}

export async function scrape(url: string, init: RequestInit = {}): Promise<Scraped> {
  const response = await fetch(url, init);
  const text = await response.text();
  const parsed = response.status === 200 ? await parse(text) : { metrics: {}, nan: [] };
  return { status: response.status, contentType: response.headers.get('content-type'), text, ...parsed };
}

function matches(labels: Record<string, string>, wanted: Record<string, string>): boolean {
  return Object.keys(wanted).length === Object.keys(labels).length && Object.entries(wanted).every(([k, v]) => labels[k] === v);
}

/** The value of the counter or gauge sample with exactly these labels; undefined when there is none. */
export function valueOf(metrics: PromMetrics, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = metrics[name];
  if (family === undefined) return undefined;
  return (family.data as PromData[]).find((sample) => matches(sample.labels, labels))?.value;
}

/** The histogram series with exactly these labels (`le` aside), checked to be one: type, buckets, sum and count. */
export function histogramOf(metrics: PromMetrics, name: string, labels: Record<string, string> = {}): PromHistogramData | undefined {
  const family = metrics[name];
  if (family === undefined) return undefined;
  assert.equal(family.type, 'histogram', `${name} is a histogram`);
  const series = (family.data as PromHistogramData[]).find((h) => matches(h.labels, labels));
  if (series) {
    assert.equal(typeof series.sum, 'number', `${name} has a sum`);
    assert.ok(Object.keys(series.buckets).length > 1, `${name} has buckets`);
    assert.equal(series.buckets['+Inf'], series.count, `${name}: the +Inf bucket is the count`);
  }
  return series;
}

/** Every label set of a family, for assertions about which series exist. */
export function labelSets(metrics: PromMetrics, name: string): Array<Record<string, string>> {
  return (metrics[name]?.data ?? []).map((sample) => sample.labels);
}
