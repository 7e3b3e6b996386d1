/**
 * The exposition of one registry: collects the family views and serializes them with one
 * long-lived Serializer, so every scrape reuses the rendered text of the series that did not
 * change since the previous one.
 */
import type { MetricsRegistry } from '../metrics/registry.js';
import { Serializer, type Format } from './serializer.js';

export interface Exposition {
  /** Every family in `format`, as parts whose concatenation is the whole text (see Serializer.serialize). */
  render(format: Format): Promise<string[]>;
}

export function createExposition(registry: Pick<MetricsRegistry, 'collect'>): Exposition {
  const serializer = new Serializer();
  return {
    render: async (format) => serializer.serialize(await registry.collect(), format),
  };
}

/** The whole exposition as one string (tests, benchmarks). */
export async function renderText(exposition: Exposition, format: Format = 'text'): Promise<string> {
  const parts = await exposition.render(format);
  // Joined in 64 KiB runs first: one join of every part into a string of many megabytes is
  // slower than joining the runs (tools/scrape-timing.ts).
  const runs: string[] = [];
  let run: string[] = [];
  let length = 0;
  for (const part of parts) {
    run.push(part);
    length += part.length;
    if (length < 64 * 1024) continue;
    runs.push(run.join(''));
    run = [];
    length = 0;
  }
  runs.push(run.join(''));
  return runs.join('');
}
