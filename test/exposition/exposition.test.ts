/**
 * The exposition of one registry: each format rendered by its own long-lived serializer from the
 * registry's current families, the text joined whole however many parts it has, and protobuf
 * loaded with its first scrape.
 */
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/catalogue.js';
import { createExposition, renderProtobuf, renderText } from '../../src/exposition/exposition.js';
import { ProtobufSerializer } from '../../src/exposition/protobuf.js';
import { Serializer } from '../../src/exposition/serializer.js';
import { DEFAULT_BUCKETS } from '../../src/metrics/declare.js';

function setup() {
  const registry = createMetricsRegistry({ buckets: DEFAULT_BUCKETS, maxAgentSeries: 1000, defaultMetrics: false });
  return { registry, exposition: createExposition(registry) };
}

describe('createExposition', () => {
  it.each(['text', 'openmetrics'] as const)('renders %s as a fresh serializer renders the same families', async (format) => {
    const { registry, exposition } = setup();
    registry.metrics.toolCalls.inc({ tool: 'terminal', status: 'ok' }, 2);
    const expected = new Serializer().serialize(await registry.collect(), format).join('');
    const parts = await exposition.render(format);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join('')).toBe(expected);
    expect(expected).toContain('hermes_tool_calls_total{tool="terminal",status="ok"} 2\n');
    if (format === 'openmetrics') expect(expected.endsWith('# EOF\n')).toBe(true);
  });

  it('renders the writes made since the previous scrape, and nothing else', async () => {
    const { registry, exposition } = setup();
    const before = await renderText(exposition);
    expect(await renderText(exposition)).toBe(before);
    registry.metrics.toolCalls.inc({ tool: 'terminal', status: 'ok' });
    const after = await renderText(exposition);
    const added = after.split('\n').filter((line) => !before.split('\n').includes(line));
    // The new series, and the series budget's count and bytes of it.
    expect(added).toEqual([
      'hermes_tool_calls_total{tool="terminal",status="ok"} 1',
      'hermes_sidecar_series 1',
      `hermes_sidecar_series_bytes ${registry.seriesBytes()}`,
    ]);
    expect(registry.seriesBytes()).toBeGreaterThan(0);
  });

  it('renders protobuf as the protobuf serializer does, as one buffer', async () => {
    const { registry, exposition } = setup();
    registry.metrics.apiRequestDuration.observe({ kind: 'main', provider: 'p', model: 'm', outcome: 'success' }, 1.5);
    const expected = Buffer.concat(new ProtobufSerializer().serialize(await registry.collect()));
    const rendered = await renderProtobuf(exposition);
    expect(rendered.length).toBeGreaterThan(1000);
    expect(rendered.equals(expected)).toBe(true);
  });
});

describe('renderText', () => {
  it('joins parts past the 64 KiB run size whole, in order', async () => {
    const parts = Array.from({ length: 300 }, (_, index) => `${String(index).padStart(4, '0')}${'x'.repeat(1000)}\n`);
    const text = await renderText({ render: () => Promise.resolve(parts) });
    expect(text).toBe(parts.join(''));
    expect(text.length).toBe(300 * 1005);
  });

  it('decodes byte parts as UTF-8', async () => {
    const text = await renderText({ render: () => Promise.resolve(['a', new TextEncoder().encode('ünï'), 'b']) });
    expect(text).toBe('aünïb');
  });
});
