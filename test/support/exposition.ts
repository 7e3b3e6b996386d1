/** Reading Prometheus text exposition in tests: samples by their exact series text. */

export type Samples = ReadonlyMap<string, number>;

/** `name{labels} value` lines into a map keyed by `name{labels}` exactly as rendered. */
export function parseSamples(text: string): Samples {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const value = line.slice(space + 1);
    samples.set(line.slice(0, space), value === 'NaN' ? Number.NaN : Number(value));
  }
  return samples;
}

/** Samples of metrics whose name starts with one of the prefixes. */
export function samplesOf(samples: Samples, ...prefixes: string[]): Map<string, number> {
  return new Map([...samples].filter(([series]) => prefixes.some((prefix) => series.startsWith(prefix))));
}

/** Renders `name{a="x",b="y"}` with labels in the order given (the order the catalogue declares). */
export function series(name: string, labels: Record<string, string> = {}): string {
  const pairs = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  return pairs.length === 0 ? name : `${name}{${pairs.join(',')}}`;
}
