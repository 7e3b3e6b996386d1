/**
 * The shipped prometheus.yml's scrape limits can never be reached by the sidecar: a registry
 * flooded with hostile label values in every family, past every cap, renders fewer samples,
 * labels and shorter names and values than the limits derived from the catalogue.
 */
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createSidecar } from '../../src/app.js';
import { CATALOGUE } from '../../src/catalogue.js';
import { defaultConfig } from '../../src/config.js';
import { closedValues, type MetricSpec } from '../../src/metrics/declare.js';
import { OTHER, UNKNOWN } from '../../src/wireText.js';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import {
  ADDED_TARGET_LABELS,
  maxLabels,
  maxLabelNameLength,
  maxLabelValueBytes,
  maxSamples,
  RUNTIME_ALLOWANCE,
  scrapeLimitArithmetic,
  scrapeLimits,
} from '../../monitoring/limits.js';
import { alertmanagerTarget, prometheusConfig } from '../../monitoring/provisioning.js';
import { pino } from 'pino';

const specs = Object.values(CATALOGUE as Record<string, MetricSpec>);

/** A deterministic stream of hostile label values: long, multi-byte, each new. */
function hostileValues() {
  let counter = 0;
  return (): string => {
    counter += 1;
    return `${'\u{1F600}'.repeat(40)}-${counter}-${'é'.repeat(100)}`;
  };
}

interface SampleLine {
  readonly name: string;
  readonly labels: readonly [string, string][];
}

/** The samples of a text exposition (every line that is not a comment). */
function parseLines(text: string): SampleLine[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const brace = line.indexOf('{');
      const space = line.indexOf(' ');
      const name = brace >= 0 && brace < space ? line.slice(0, brace) : line.slice(0, space);
      const labels = [...line.slice(0, line.lastIndexOf('} ') + 1).matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(
        (match) => [match[1] as string, JSON.parse(`"${match[2] as string}"`) as string] as [string, string],
      );
      return { name, labels };
    });
}

/** Writes `rounds` label sets to every family: open labels hostile (through the label guard), closed ones each value. */
function flood(rounds: number) {
  // The series count cap is what this fills: the byte budget, which binds first at these label
  // lengths, is off, so the exposition reaches its widest.
  const sidecar = createSidecar(defaultConfig({ 'metrics.semconv': 'true', 'metrics.max-series-bytes': '0' }), { logger: pino({ level: 'silent' }) });
  const next = hostileValues();
  const { metrics } = sidecar;
  for (let round = 0; round < rounds; round += 1) {
    for (const [key, spec] of Object.entries(CATALOGUE as Record<string, MetricSpec>)) {
      const labels: Record<string, string> = {};
      for (const name of spec.labelNames) {
        const declared = spec.labels[name];
        const closed = declared === undefined ? undefined : closedValues(declared, specs);
        const choices = closed === undefined ? undefined : [...closed, UNKNOWN, OTHER];
        labels[name] = choices === undefined ? next() : (choices[round % choices.length] as string);
      }
      const family = (metrics as unknown as Record<string, { inc?: (l: unknown, n?: number) => void; set?: (l: unknown, v: number) => void; observe?: (l: unknown, v: number) => void }>)[key];
      if (spec.type === 'histogram') family?.observe?.(labels, round);
      else if (spec.type === 'gauge') family?.set?.(labels, round);
      else family?.inc?.(labels, 1);
    }
  }
  return sidecar;
}

describe('scrape limits of the shipped prometheus.yml', () => {
  it('sets the limits derived from the catalogue', () => {
    const limits = scrapeLimits();
    const config = prometheusConfig();
    expect(config).toContain(`sample_limit: ${limits.sampleLimit}`);
    expect(config).toContain(`label_limit: ${limits.labelLimit}`);
    expect(config).toContain(`label_name_length_limit: ${limits.labelNameLengthLimit}`);
    expect(config).toContain(`label_value_length_limit: ${limits.labelValueLengthLimit}`);
    expect(limits.sampleLimit).toBeGreaterThanOrEqual(maxSamples());
    expect(limits.labelValueLengthLimit).toBeGreaterThanOrEqual(maxLabelValueBytes());
  });

  it('leaves room for the target labels a deployment adds', () => {
    const limits = scrapeLimits();
    // One added label (env, site) must never fail a scrape: the widest sample plus ten labels.
    expect(limits.labelLimit).toBe(maxLabels() + ADDED_TARGET_LABELS);
    expect(limits.labelLimit).toBeGreaterThanOrEqual(maxLabels() + 2);
    // app_kubernetes_io_ + a 63-character Kubernetes label name.
    expect(limits.labelNameLengthLimit).toBeGreaterThanOrEqual('app_kubernetes_io_'.length + 63);
    expect(limits.labelNameLengthLimit).toBeGreaterThan(maxLabelNameLength());
  });

  it('sends alerts to the Alertmanager on its default port', () => {
    const config = parseYaml(prometheusConfig()) as { alerting?: { alertmanagers?: { static_configs?: { targets?: string[] }[] }[] } };
    expect(config.alerting?.alertmanagers?.[0]?.static_configs?.[0]?.targets).toEqual([alertmanagerTarget]);
    expect(alertmanagerTarget).toBe('localhost:9093');
  });

  it('is what docs/scale-out.md says, number for number', () => {
    const docs = readFileSync(new URL('../../docs/scale-out.md', import.meta.url), 'utf8');
    const format = (value: number) => value.toLocaleString('en-US');
    for (const limit of scrapeLimitArithmetic()) {
      expect(docs, limit.setting).toContain(`| \`${limit.setting}\` | ${format(limit.value)} |`);
    }
    // Every figure the docs give for sample_limit anywhere is the shipped one.
    const sampleLimit = format(scrapeLimits().sampleLimit);
    const mentions = docs.split('\n').filter((line) => line.includes('sample_limit'));
    expect(mentions.length).toBeGreaterThan(1);
    for (const line of mentions) {
      const figures = [...line.matchAll(/\b\d{3},\d{3}\b/g)].map((match) => match[0]);
      for (const figure of figures) expect([sampleLimit, format(maxSamples())], line).toContain(figure);
    }
  });

  it('bounds the runtime metrics prom-client adds by the runtime allowance, after garbage collections', async () => {
    const registry = new client.Registry();
    client.collectDefaultMetrics({ register: registry });
    // Garbage of every generation, so the GC duration histogram has its label sets.
    for (let round = 0; round < 50; round += 1) void new Array(100_000).fill(round).map(String);
    await new Promise((resolve) => setTimeout(resolve, 0));
    const text = await registry.metrics();
    const lines = parseLines(text);
    expect(lines.length).toBeGreaterThan(20);
    expect(lines.length).toBeLessThanOrEqual(RUNTIME_ALLOWANCE.samples);
    for (const line of lines) {
      expect(line.labels.length).toBeLessThanOrEqual(RUNTIME_ALLOWANCE.labels);
      for (const [name, value] of line.labels) {
        expect(name.length).toBeLessThanOrEqual(RUNTIME_ALLOWANCE.labelNameLength);
        expect(Buffer.byteLength(value)).toBeLessThanOrEqual(RUNTIME_ALLOWANCE.labelValueLength);
      }
    }
  });

  it('is never reached by a sidecar flooded past every cap', async () => {
    // 600 rounds put more than the 256 values of the largest cap through every open label and
    // more than 10,000 label sets into the agent families.
    const sidecar = flood(600);
    expect(sidecar.registry.agentSeries()).toBeGreaterThanOrEqual(10_000);
    const lines = parseLines(await sidecar.registry.render('text'));
    expect(lines.length).toBeLessThanOrEqual(maxSamples());
    // Prometheus adds __name__, job and instance to the labels it counts.
    const targetLabels = [['job', 'hermes-sidecar'], ['instance', 'localhost:9478']] as const;
    let mostLabels = 0;
    let longestName = 0;
    let longestValue = 0;
    for (const line of lines) {
      const labels = [...line.labels, ...targetLabels, ['__name__', line.name] as const];
      mostLabels = Math.max(mostLabels, labels.length);
      for (const [name, value] of labels) {
        longestName = Math.max(longestName, name.length);
        longestValue = Math.max(longestValue, Buffer.byteLength(value));
      }
    }
    expect(mostLabels).toBeLessThanOrEqual(maxLabels());
    expect(longestName).toBeLessThanOrEqual(maxLabelNameLength());
    expect(longestValue).toBeLessThanOrEqual(maxLabelValueBytes());
    // The flood reached the guard's longest values: the bound on values is not slack by far.
    expect(longestValue).toBeGreaterThan(maxLabelValueBytes() / 2);
  });
});
