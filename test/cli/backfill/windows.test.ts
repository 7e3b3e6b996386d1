/**
 * The window loop on a real session database: windows planned from the earliest row in range to
 * --until, rows before --from read and left out, one file per window with samples, every sample
 * in its own window's file, progress and the memory budget checked per window.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MAX_TIME_MS } from '../../../src/cli/backfill/args.js';
import { Cursor } from '../../../src/cli/backfill/cursor.js';
import { HISTORY_FAMILIES, HistoryBuilder } from '../../../src/cli/backfill/history.js';
import { MemoryBudget } from '../../../src/cli/backfill/memory.js';
import { BLOCK_WINDOW_MS, OpenMetricsOutput, windowOf } from '../../../src/cli/backfill/openmetrics.js';
import { messages } from '../../../src/cli/backfill/read.js';
import { openReadOnly } from '../../../src/cli/backfill/sqlite.js';
import { planWindows, RunTracker, writeWindows } from '../../../src/cli/backfill/windows.js';
import { scratchDir } from '../../support/scratch.js';
import { createStateDb } from '../../support/stateDb.js';
import { python3 } from '../../support/tools.js';

const python = python3();
const WEEK = BLOCK_WINDOW_MS / 1000;
const STEP = 15_000;

function toolResults(times: readonly number[]): string {
  const dir = scratchDir('backfill-windows-');
  const path = join(dir, 'state.db');
  createStateDb(python.path ?? 'python3', path, 30, {
    sessions: [{ id: 's', source: 'cli', started_at: 100 * WEEK, ended_at: null, end_reason: null, tool_call_count: 0 }],
    messages: times.map((timestamp) => ({ session_id: 's', role: 'tool', tool_name: 'terminal', timestamp, finish_reason: null })),
  });
  return dir;
}

describe.skipIf(python.path === undefined)(`windows${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  it('plans from the first row in range to --until and writes each sample into its own window', () => {
    // Tool results in windows 100, 100 (its last second: its step ends in window 101), 102 and one before --from.
    const dir = toolResults([100 * WEEK + 60, 101 * WEEK - 1, 102 * WEEK + 30, 50 * WEEK]);
    const path = join(dir, 'state.db');
    const untilMs = 103 * BLOCK_WINDOW_MS + 5_000;
    const history = new HistoryBuilder({ fromMs: 90 * BLOCK_WINDOW_MS, untilMs, stepMs: STEP, extraLabels: [] });
    const db = openReadOnly(Database, path, 'test');
    const cursor = Cursor.of(db, messages, true, (row) => history.message('default', row));
    const progress: string[] = [];
    const checked: number[] = [];
    const tracker = new RunTracker(new MemoryBudget(1 << 30, () => (checked.push(1), 0)), (t) => progress.push(`${t.done}/${t.plan?.total}`));
    try {
      const plan = planWindows([cursor], 90 * BLOCK_WINDOW_MS, untilMs, tracker);
      expect(plan).toEqual({ first: 100, last: 103, total: 4 });
      expect(history.skipped.outsideRange).toBe(1);
      const output = new OpenMetricsOutput(join(dir, 'openmetrics'), Object.values(HISTORY_FAMILIES));
      writeWindows([cursor], plan, STEP, history.counters, output, tracker);
      output.commit();
      expect(progress).toEqual(['1/4', '2/4', '3/4', '4/4']);
      expect(checked).toHaveLength(4);
      expect(tracker.rows).toBe(4);
      expect(output.files).toHaveLength(4);
      for (const [index, file] of output.files.entries()) {
        const stamps = readFileSync(file, 'utf8').split('\n').filter((line) => line.startsWith('hermes_')).map((line) => Number(line.split(' ').at(-1)) * 1000);
        for (const ms of stamps) expect(windowOf(ms), file).toBe(100 + index);
      }
      const all = output.files.map((file) => readFileSync(file, 'utf8')).join('');
      const values = all.split('\n').filter((line) => line.startsWith('hermes_history_tool_calls_total')).map((line) => line.split(' ').slice(1).join(' '));
      expect(values).toEqual([
        `0 ${(100 * WEEK + 45).toFixed(3)}`,
        `1 ${(100 * WEEK + 60).toFixed(3)}`,
        // The step ending at 101 weeks starts in window 100: its unchanged value is written there.
        `1 ${(101 * WEEK - 15).toFixed(3)}`,
        `2 ${(101 * WEEK).toFixed(3)}`,
        `2 ${(102 * WEEK + 15).toFixed(3)}`,
        `3 ${(102 * WEEK + 30).toFixed(3)}`,
        `3 ${(untilMs / 1000).toFixed(3)}`,
      ]);
    } finally {
      cursor.stop();
      db.close();
    }
  });

  it('passes over windows with nothing to write: --until in the year 9999 costs one window more', () => {
    const dir = toolResults([100 * WEEK + 60]);
    const history = new HistoryBuilder({ fromMs: undefined, untilMs: MAX_TIME_MS, stepMs: STEP, extraLabels: [] });
    const db = openReadOnly(Database, join(dir, 'state.db'), 'test');
    const cursor = Cursor.of(db, messages, true, (row) => history.message('default', row));
    const progress: number[] = [];
    const tracker = new RunTracker(new MemoryBudget(1 << 30, () => 0), (t) => progress.push(t.done));
    try {
      const plan = planWindows([cursor], undefined, MAX_TIME_MS, tracker);
      expect(plan.total).toBe(windowOf(MAX_TIME_MS) - 100 + 1);
      const output = new OpenMetricsOutput(join(dir, 'openmetrics'), Object.values(HISTORY_FAMILIES));
      writeWindows([cursor], plan, STEP, history.counters, output, tracker);
      output.commit();
      // After the first window, every quiet one up to the last is done at once.
      expect(progress).toEqual([plan.total - 1, plan.total]);
      expect(output.files).toHaveLength(2);
      expect(readFileSync(output.files[1] ?? '', 'utf8')).toContain(`hermes_history_tool_calls_total{tool="terminal",profile="default",source="backfill"} 1 ${(MAX_TIME_MS / 1000).toFixed(3)}\n`);
    } finally {
      cursor.stop();
      db.close();
    }
  });
});
