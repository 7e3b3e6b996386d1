/**
 * The golden files are valid by tools outside this project: the text one by `promtool check
 * metrics`, the OpenMetrics one by the strict Python OpenMetrics parser, which also sees every
 * exemplar and unit.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openMetricsParser, parseOpenMetrics } from '../support/openmetrics.js';
import { promtool } from '../support/tools.js';

const GOLDEN_DIR = new URL('./golden/', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, GOLDEN_DIR), 'utf8');

const tool = promtool();
const parser = openMetricsParser();

describe('golden files against external validators', () => {
  it.skipIf(tool.path === undefined)(`the text format passes promtool check metrics${tool.skipReason ? ` (${tool.skipReason})` : ''}`, () => {
    const result = spawnSync(tool.path ?? 'promtool', ['check', 'metrics'], { input: read('families.prom'), encoding: 'utf8' });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it.skipIf(parser.path === undefined)(`the OpenMetrics format passes the strict parser${parser.skipReason ? ` (${parser.skipReason})` : ''}`, () => {
    const result = parseOpenMetrics(read('families.om'));
    if (!result.ok) throw new Error(result.error);
    const byName = new Map(result.families.map((family) => [family.name, family]));
    expect([...byName.keys()]).toEqual([
      'demo_requests',
      'demo_written_bytes',
      'demo_last_seen_timestamp_seconds',
      'demo_balance',
      'demo_empty',
      'demo_call_duration_seconds',
      'demo_batch_events',
      'demo_runtime_ratio',
    ]);
    expect(byName.get('demo_written_bytes')?.unit).toBe('bytes');
    expect(byName.get('demo_call_duration_seconds')?.unit).toBe('seconds');
    expect(byName.get('demo_call_duration_seconds')?.exemplars).toEqual([
      { sample: 'demo_call_duration_seconds_bucket', labels: { tool_call_id: 'call_1', turn_id: 'T1' }, value: 0.05, timestamp: 1796133400 },
      { sample: 'demo_call_duration_seconds_bucket', labels: { tool_call_id: 'call_2' }, value: 2.5, timestamp: 1796133401.5 },
      { sample: 'demo_call_duration_seconds_bucket', labels: { tool_call_id: 'call "3"' }, value: 99, timestamp: 1796133402 },
    ]);
  });
});
