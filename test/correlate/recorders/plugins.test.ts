/** The plugin report recorder: hermes_plugin_info of live instances, refused values from heartbeats. */
import { describe, expect, it } from 'vitest';
import { PLUGIN_REPORT_FAMILIES, PluginReportRecorder } from '../../../src/correlate/recorders/plugins.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

const INFO = { hermes_version: '0.21.0', plugin_version: '1.2.0', profile: 'default' };

function heartbeat(refused: readonly { field: string; total: number }[] = [], profile = 'default') {
  return {
    type: 'plugin_heartbeat',
    intervalSeconds: 10,
    dropped: [],
    hermesVersion: '0.21.0',
    pluginVersion: '1.2.0',
    profile,
    refused,
  } as const;
}

function setup(maxInstances = 10) {
  const harness = recorderHarness();
  return { harness, plugins: new PluginReportRecorder(harness.context, familiesFor(harness.metrics, PLUGIN_REPORT_FAMILIES), maxInstances) };
}

describe('PluginReportRecorder', () => {
  it('counts live instances per host version, plugin version and profile, and 0 once they go quiet', async () => {
    const { harness, plugins } = setup();
    plugins.heartbeat('a', heartbeat());
    plugins.heartbeat('b', heartbeat());
    plugins.collect();
    expect((await harness.samples()).get(series('hermes_plugin_info', INFO))).toBe(2);
    // Live while within three heartbeat intervals.
    harness.advance(30);
    plugins.collect();
    expect((await harness.samples()).get(series('hermes_plugin_info', INFO))).toBe(2);
    harness.advance(1);
    plugins.collect();
    expect((await harness.samples()).get(series('hermes_plugin_info', INFO))).toBe(0);
  });

  it('counts refused values by the deltas of their cumulative totals, a smaller total as a restart', async () => {
    const { harness, plugins } = setup();
    plugins.heartbeat('a', heartbeat([{ field: 'model', total: 3 }]));
    plugins.heartbeat('a', heartbeat([{ field: 'model', total: 5 }]));
    plugins.heartbeat('a', heartbeat([{ field: 'model', total: 2 }, { field: 'no_such_field', total: 7 }]));
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'model' }))).toBe(7);
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'other' }))).toBe(7);
  });

  it('forgets the least recently heard instance when full, counted as an instance_reports eviction', async () => {
    const { harness, plugins } = setup(1);
    plugins.heartbeat('a', heartbeat());
    plugins.heartbeat('b', heartbeat());
    plugins.collect();
    expect((await harness.samples()).get(series('hermes_plugin_info', INFO))).toBe(1);
    expect(harness.evictions).toEqual(['instance_reports']);
  });

  it('sets the combination of an evicted instance to 0, scraped before its eviction or not, and forgets its refused totals with it', async () => {
    const { harness, plugins } = setup(1);
    const info = (profile: string) => series('hermes_plugin_info', { ...INFO, profile });
    const refused = series('hermes_plugin_values_refused_total', { field: 'model' });
    plugins.heartbeat('a', heartbeat([{ field: 'model', total: 4 }], 'profile-a'));
    plugins.collect();
    expect((await harness.samples()).get(info('profile-a'))).toBe(1);
    // 'b' evicts 'a' after a scrape; 'c' evicts 'b' before the next one.
    plugins.heartbeat('b', heartbeat([], 'profile-b'));
    plugins.heartbeat('c', heartbeat([], 'profile-c'));
    plugins.collect();
    let samples = await harness.samples();
    expect([info('profile-a'), info('profile-b'), info('profile-c')].map((name) => samples.get(name))).toEqual([0, 0, 1]);
    expect(harness.evictions).toEqual(['instance_reports', 'instance_reports']);
    // 'a' returns as a new instance: its cumulative total counts whole, as a restart would.
    plugins.heartbeat('a', heartbeat([{ field: 'model', total: 4 }], 'profile-a'));
    plugins.collect();
    samples = await harness.samples();
    expect([info('profile-a'), info('profile-b'), info('profile-c')].map((name) => samples.get(name))).toEqual([1, 0, 0]);
    expect(samples.get(refused)).toBe(8);
    expect(harness.evictions).toEqual(['instance_reports', 'instance_reports', 'instance_reports']);
  });
});
