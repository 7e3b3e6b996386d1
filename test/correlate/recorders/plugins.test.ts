/** The plugin report recorder: guarded host labels, refused deltas, hermes_plugin_info from a liveness pass. */
import { describe, expect, it } from 'vitest';
import { PLUGIN_REPORT_FAMILIES, PluginReportRecorder } from '../../../src/correlate/recorders/plugins.js';
import { familiesFor } from '../../../src/metrics/registry.js';
import { defaultLabelRules } from '../../../src/metrics/labels.js';
import { series } from '../../support/exposition.js';
import { recorderHarness } from '../../support/recorders.js';

const host = (hermes_version: string, profile = 'default') => ({ hermes_version, plugin_version: '1.2.0', profile });
const info = (hermes_version: string, profile = 'default') => series('hermes_plugin_info', host(hermes_version, profile));

function heartbeat(fields: { hermesVersion?: string; pluginVersion?: string; profile?: string }) {
  return { type: 'plugin_heartbeat', dropped: [], refused: [], ...fields } as const;
}

function setup(labelRules = defaultLabelRules()) {
  const harness = recorderHarness({ labelRules });
  return { harness, plugins: new PluginReportRecorder(harness.context, familiesFor(harness.metrics, PLUGIN_REPORT_FAMILIES)) };
}

describe('PluginReportRecorder', () => {
  it('reads a heartbeat host description as guarded label values, unknown where absent', () => {
    const { plugins } = setup();
    expect(plugins.hostLabels(heartbeat({ hermesVersion: '0.21.3', pluginVersion: '1.2.0', profile: 'work' }))).toEqual(host('0.21.3', 'work'));
    expect(plugins.hostLabels(heartbeat({}))).toEqual({ hermes_version: 'unknown', plugin_version: 'unknown', profile: 'unknown' });
  });

  it('folds host values past the label cap into other', () => {
    const rules = defaultLabelRules();
    const { plugins } = setup({ ...rules, profile: { ...rules.profile, cap: 1 } });
    expect(plugins.hostLabels(heartbeat({ profile: 'first' })).profile).toBe('first');
    expect(plugins.hostLabels(heartbeat({ profile: 'second' })).profile).toBe('other');
  });

  it('counts only the refused rises among host deltas, by field', async () => {
    const { harness, plugins } = setup();
    plugins.refused([
      { total: 'refused', field: 'model', delta: 3 },
      { total: 'dropped', hook: 'post_tool_call', reason: 'queue_full', delta: 100 },
      { total: 'refused', field: 'other', delta: 2 },
      { total: 'refused', field: 'model', delta: 1 },
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'model' }))).toBe(4);
    expect(samples.get(series('hermes_plugin_values_refused_total', { field: 'other' }))).toBe(2);
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'post_tool_call', reason: 'queue_full' }))).toBe(0);
  });

  it('sets hermes_plugin_info from the live hosts, an undescribed instance as unknown, and 0 for a combination no longer live', async () => {
    const { harness, plugins } = setup();
    const unknown = series('hermes_plugin_info', { hermes_version: 'unknown', plugin_version: 'unknown', profile: 'unknown' });
    plugins.hostsSeen([
      { host: host('0.21.3'), live: 2 },
      { host: undefined, live: 1 },
      { host: { hermes_version: 'unknown', plugin_version: 'unknown', profile: 'unknown' }, live: 1 },
    ]);
    let samples = await harness.samples();
    expect(samples.get(info('0.21.3'))).toBe(2);
    expect(samples.get(unknown)).toBe(2);
    plugins.hostsSeen([{ host: host('0.21.5'), live: 1 }]);
    samples = await harness.samples();
    expect([samples.get(info('0.21.3')), samples.get(unknown), samples.get(info('0.21.5'))]).toEqual([0, 0, 1]);
    // A combination written 0 once is not written again until it is live again.
    plugins.hostsSeen([]);
    samples = await harness.samples();
    expect([samples.get(info('0.21.3')), samples.get(info('0.21.5'))]).toEqual([0, 0]);
  });
});
