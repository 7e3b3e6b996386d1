/**
 * The window files: one per window with samples and none for an empty one, each family's lines
 * together under one header, label values escaped by the exposition's own escaping, counts that
 * match the bytes and lines written, and write failures as `write_failed` with nothing kept.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BackfillError } from '../../../src/cli/backfill/errors.js';
import { HISTORY_FAMILIES } from '../../../src/cli/backfill/history.js';
import { BLOCK_WINDOW_MS, OpenMetricsOutput } from '../../../src/cli/backfill/openmetrics.js';
import { CounterSet } from '../../../src/cli/backfill/series.js';
import { escapeLabelValue } from '../../../src/exposition/serializer.js';
import { scratchDir } from '../../support/scratch.js';

const STEP = 15_000;
const families = [HISTORY_FAMILIES.toolCalls, HISTORY_FAMILIES.finishReasons];
const tool = HISTORY_FAMILIES.toolCalls.name;
const reason = HISTORY_FAMILIES.finishReasons.name;

describe('window files', () => {
  it('writes one file per window with samples, families together, and counts what it wrote', () => {
    const until = 3 * BLOCK_WINDOW_MS;
    const counters = new CounterSet({ stepMs: STEP, untilMs: until });
    counters.add(tool, [['tool', 'a']], 1_000, 1);
    counters.add(reason, [['finish_reason', 'stop']], 2_000, 1);
    counters.add(tool, [['tool', 'b']], 3_000, 1);
    const dir = join(scratchDir('backfill-om-'), 'openmetrics');
    const output = new OpenMetricsOutput(dir, families);
    for (let window = 0; window <= 2; window += 1) output.writeWindow(window, counters, window === 2);
    output.commit();
    // Window 1 has no sample: the series are quiet until --until, in window 2.
    expect(readdirSync(dir)).toEqual(['1970-01-01T000000Z.om', '1970-01-14T120000Z.om']);
    expect(output.files).toEqual(readdirSync(dir).map((name) => join(dir, name)));
    const first = readFileSync(join(dir, '1970-01-01T000000Z.om'), 'utf8');
    expect(first).toBe(
      [
        `# TYPE hermes_history_tool_calls counter`,
        `# HELP hermes_history_tool_calls ${HISTORY_FAMILIES.toolCalls.help}`,
        `${tool}{tool="a"} 0 0.000`,
        `${tool}{tool="a"} 1 15.000`,
        `${tool}{tool="b"} 0 0.000`,
        `${tool}{tool="b"} 1 15.000`,
        `# TYPE hermes_history_finish_reasons counter`,
        `# HELP hermes_history_finish_reasons ${HISTORY_FAMILIES.finishReasons.help}`,
        `${reason}{finish_reason="stop"} 0 0.000`,
        `${reason}{finish_reason="stop"} 1 15.000`,
        '# EOF',
        '',
      ].join('\n'),
    );
    const last = readFileSync(join(dir, '1970-01-14T120000Z.om'), 'utf8');
    expect(last.split('\n').filter((line) => line.startsWith('# TYPE'))).toEqual(['# TYPE hermes_history_tool_calls counter', '# TYPE hermes_history_finish_reasons counter']);
    const sampleLines = (first + last).split('\n').filter((line) => line.startsWith('hermes_')).length;
    expect(output.samples).toBe(sampleLines);
    expect(output.bytes).toBe(statSync(join(dir, '1970-01-01T000000Z.om')).size + statSync(join(dir, '1970-01-14T120000Z.om')).size);
  });

  it('escapes label values with the exposition\'s escaping', () => {
    const hostile = 'a"b\\c\nd';
    const counters = new CounterSet({ stepMs: STEP, untilMs: BLOCK_WINDOW_MS - 1 });
    counters.add(tool, [['tool', hostile]], 1_000, 1);
    const dir = join(scratchDir('backfill-om-escape-'), 'openmetrics');
    const output = new OpenMetricsOutput(dir, families);
    output.writeWindow(0, counters, true);
    output.commit();
    const text = readFileSync(output.files[0] ?? '', 'utf8');
    expect(escapeLabelValue(hostile)).toBe('a\\"b\\\\c\\nd');
    expect(text).toContain(`${tool}{tool="${escapeLabelValue(hostile)}"} 1 15.000\n`);
  });

  it('fails as write_failed naming the path, and abort leaves nothing', () => {
    const base = scratchDir('backfill-om-fail-');
    let caught: unknown;
    try {
      new OpenMetricsOutput(join(base, 'missing', 'openmetrics'), families);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(BackfillError);
    expect(caught).toMatchObject({ code: 'write_failed', exitCode: 1, message: `Writing ${join(base, 'missing', 'openmetrics')}.partial failed (ENOENT): nothing was kept.` });

    const output = new OpenMetricsOutput(join(base, 'openmetrics'), families);
    const counters = new CounterSet({ stepMs: STEP, untilMs: BLOCK_WINDOW_MS - 1 });
    counters.add(tool, [['tool', 'a']], 1_000, 1);
    output.writeWindow(0, counters, true);
    output.abort();
    expect(readdirSync(base)).toEqual([]);
    expect(existsSync(join(base, 'openmetrics'))).toBe(false);
  });
});
