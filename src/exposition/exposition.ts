/**
 * The exposition of one registry: collects the family views and serializes them with one
 * long-lived serializer per kind (text formats, protobuf), so every scrape reuses the rendered
 * text or bytes of the series that did not change since the previous one.
 */
import type { MetricsRegistry } from '../metrics/registry.js';
import type { ProtobufSerializer } from './protobuf.js';
import { Serializer, type Format } from './serializer.js';

/** Every format /metrics answers in: the text formats and the delimited protobuf messages. */
export type ExpositionFormat = Format | 'protobuf';

export interface Exposition {
  /**
   * Every family in `format`, as parts whose concatenation is the whole body: strings for the
   * text formats (see Serializer.serialize), bytes for protobuf (see ProtobufSerializer.serialize).
   */
  render(format: ExpositionFormat): Promise<readonly (string | Uint8Array)[]>;
}

export function createExposition(registry: Pick<MetricsRegistry, 'collect'>): Exposition {
  const serializer = new Serializer();
  // Loaded with the first protobuf scrape: a sidecar that only text scrapers read never pays
  // protobufjs' resident memory.
  let protobuf: Promise<ProtobufSerializer> | undefined;
  const protobufSerializer = () => (protobuf ??= import('./protobuf.js').then((module) => new module.ProtobufSerializer()));
  return {
    render: async (format) => {
      if (format === 'protobuf') {
        const encoder = await protobufSerializer();
        return encoder.serialize(await registry.collect());
      }
      return serializer.serialize(await registry.collect(), format);
    },
  };
}

/** The whole protobuf exposition as one Buffer (tests, benchmarks). */
export async function renderProtobuf(exposition: Exposition): Promise<Buffer> {
  const parts = await exposition.render('protobuf');
  return Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : part)));
}

const decoder = new TextDecoder();

/** The whole exposition as one string (tests, benchmarks). */
export async function renderText(exposition: Exposition, format: Format = 'text'): Promise<string> {
  const parts = (await exposition.render(format)).map((part) => (typeof part === 'string' ? part : decoder.decode(part)));
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
