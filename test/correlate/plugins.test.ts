/**
 * What plugin instances say about themselves in their heartbeats: hermes_plugin_info counts the
 * live instances of each (hermes_version, plugin_version, profile), and the boundary grammar's
 * refusals become deltas per instance; the instance id is never a label.
 */
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/catalogue.js';
import { series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

const heartbeat = (instance: string, data: Record<string, unknown>) => ({
  event: 'plugin_heartbeat',
  instance,
  data: { interval_seconds: 5, dropped: {}, plugin_version: '0.1.0', ...data },
});
const info = (hermes_version: string, profile: string) => series('hermes_plugin_info', { hermes_version, plugin_version: '0.1.0', profile });

describe('plugin instance reports', () => {
  it('counts live instances per Hermes version and profile, and stops counting stale ones', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      heartbeat('a', { hermes_version: '0.21.3', profile: 'default' }),
      heartbeat('b', { hermes_version: '0.21.3', profile: 'work' }),
      heartbeat('c', { hermes_version: '0.21.3', profile: 'work' }),
      heartbeat('d', { hermes_version: '0.19.2' }),
    ]);
    let samples = await harness.samples();
    expect(samples.get(info('0.21.3', 'default'))).toBe(1);
    expect(samples.get(info('0.21.3', 'work'))).toBe(2);
    expect(samples.get(info('0.19.2', 'unknown'))).toBe(1);
    // Three intervals later only the instances that sent another heartbeat are live.
    harness.clock.advance(16);
    await harness.postNdjson([heartbeat('b', { hermes_version: '0.21.3', profile: 'work' })]);
    samples = await harness.samples();
    expect(samples.get(info('0.21.3', 'default'))).toBe(0);
    expect(samples.get(info('0.21.3', 'work'))).toBe(1);
    expect(samples.get(info('0.19.2', 'unknown'))).toBe(0);
  });

  it('moves an instance to its new labels when a heartbeat reports another version', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([heartbeat('a', { hermes_version: '0.21.3', profile: 'default' })]);
    await harness.samples();
    await harness.postNdjson([heartbeat('a', { hermes_version: '0.21.5', profile: 'default' })]);
    const samples = await harness.samples();
    expect(samples.get(info('0.21.3', 'default'))).toBe(0);
    expect(samples.get(info('0.21.5', 'default'))).toBe(1);
  });

  it('counts refused values as deltas per instance, by field, unknown fields as other', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      heartbeat('a', { refused_fields: { turn_exit_reason: 2, model: 1 } }),
      heartbeat('b', { refused_fields: { turn_exit_reason: 5 } }),
      heartbeat('a', { refused_fields: { turn_exit_reason: 3, model: 1, constructor: 4 } }),
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'turn_exit_reason' }))).toBe(8);
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'model' }))).toBe(1);
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'other' }))).toBe(4);
  });

  it('never makes an instance id a label, and no label is called instance', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([heartbeat('ffffffffffffffffffffffffffffffff', { hermes_version: '0.21.3', profile: 'default' })]);
    expect(await harness.scrape()).not.toContain('ffffffffffffffffffffffffffffffff');
    const labelNames = Object.values(CATALOGUE).map((spec): readonly string[] => spec.labelNames);
    expect(labelNames.filter((names) => names.includes('instance'))).toEqual([]);
  });
});
