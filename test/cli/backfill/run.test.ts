/**
 * `backfill` in process on real SQLite files made by the Python fixture (Hermes' table
 * definitions): a schema it does not know, a database Hermes is still writing (rows only in the
 * WAL), the time range, a missing binding, and the output checks. The promtool and Prometheus
 * side is test/e2e/backfill.test.ts.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBackfill, type BackfillIo } from '../../../src/cli/backfill/run.js';
import { scratchDir } from '../../support/scratch.js';
import { createStateDb, createUnknownDb, holdStateDb, openMetricsFiles, readOpenMetrics, SENTINEL, type Rows } from '../../support/stateDb.js';
import { python3 } from '../../support/tools.js';

const python = python3();

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs without promtool on the PATH unless `path` is given, so only the OpenMetrics file is made. */
async function backfill(argv: string[], options: { path?: string; tty?: boolean; io?: Partial<BackfillIo> } = {}): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const code = await runBackfill(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    stderrIsTTY: options.tty ?? false,
    env: { PATH: options.path ?? '', HOME: '/nonexistent' },
    nowMs: () => Date.UTC(2026, 8, 30),
    ...options.io,
  });
  return { code, stdout, stderr };
}

const T0 = Date.UTC(2026, 8, 1) / 1000;
const rows: Rows = {
  sessions: [
    { id: 'a', source: 'cli', started_at: T0 + 10, ended_at: T0 + 610, end_reason: 'user_exit', tool_call_count: 1 },
    { id: 'b', source: 'cli', started_at: T0 + 86_400, ended_at: T0 + 86_500, end_reason: 'user_exit', tool_call_count: 0 },
  ],
  session_model_usage: [
    { session_id: 'a', model: 'm', billing_provider: 'p', task: '', api_call_count: 2, input_tokens: 10, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, estimated_cost_usd: 0.5, cost_status: 'estimated', first_seen: T0 + 10, last_seen: T0 + 600 },
    { session_id: 'b', model: 'm', billing_provider: 'p', task: '', api_call_count: 1, input_tokens: 7, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, estimated_cost_usd: 0.25, cost_status: 'estimated', first_seen: T0 + 86_400, last_seen: T0 + 86_450 },
  ],
  messages: [{ session_id: 'a', role: 'tool', tool_name: 'terminal', timestamp: T0 + 30, finish_reason: null }],
};

/** The last sample of each series named `name` (the history's totals at --until), summed. */
function lastTotal(openMetrics: string, name: string, match = ''): number {
  const last = new Map<string, number>();
  for (const line of openMetrics.split('\n')) {
    if (!line.startsWith(`${name}{`) || !line.includes(match)) continue;
    const [series, value] = [line.slice(0, line.indexOf('} ') + 1), line.slice(line.indexOf('} ') + 2).split(' ')[0]];
    last.set(series, Number(value));
  }
  return [...last.values()].reduce((sum, value) => sum + value, 0);
}

describe.skipIf(python.path === undefined)(`backfill on real session databases${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  it('refuses a database of a schema it does not know with one sentence, exit 2 and nothing written', async () => {
    const dir = scratchDir('backfill-unknown-');
    createUnknownDb(python.path ?? 'python3', join(dir, 'state.db'));
    const out = join(dir, 'out');
    const ran = await backfill(['--state-db', join(dir, 'state.db'), '--out', out]);
    expect(ran).toEqual({
      code: 2,
      stdout: '',
      stderr: 'backfill: The session database of profile "default" (database 1 of 1) is not a Hermes session database this version understands: table sessions has no column started_at.\n',
    });
    expect(existsSync(out)).toBe(false);
  });

  it('writes nothing when any one of several databases is not understood', async () => {
    const dir = scratchDir('backfill-mixed-');
    createStateDb(python.path ?? 'python3', join(dir, 'good.db'), 30, rows);
    createUnknownDb(python.path ?? 'python3', join(dir, 'bad.db'));
    const out = join(dir, 'out');
    const ran = await backfill(['--state-db', join(dir, 'good.db'), '--state-db', join(dir, 'bad.db'), '--out', out]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('(database 2 of 2)');
    expect(existsSync(out)).toBe(false);
  });

  it('says a file that is not SQLite cannot be read, without quoting it', async () => {
    const dir = scratchDir('backfill-notdb-');
    writeFileSync(join(dir, 'state.db'), `${SENTINEL}not a database at all, padded to a page.`.repeat(200));
    const ran = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'out')]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe('backfill: The session database of profile "default" (database 1 of 1) cannot be read as SQLite (SQLITE_NOTADB).\n');
  });

  it('reads rows a running Hermes committed that are still only in the WAL, and leaves the WAL alone', async () => {
    const dir = scratchDir('backfill-wal-');
    const db = join(dir, 'state.db');
    writeFileSync(join(dir, 'rows.json'), JSON.stringify(rows));
    const writer = await holdStateDb(python.path ?? 'python3', db, join(dir, 'rows.json'));
    try {
      const walBefore = statSync(`${db}-wal`).size;
      expect(walBefore).toBeGreaterThan(0);
      const ran = await backfill(['--state-db', db, '--out', join(dir, 'out')]);
      expect(ran.code, ran.stderr).toBe(0);
      const text = readOpenMetrics(join(dir, 'out'));
      expect(lastTotal(text, 'hermes_sessions_started_total')).toBe(writer.totals.sessions_started);
      expect(lastTotal(text, 'hermes_tokens_total', 'token_type="input"')).toBe(writer.totals.tokens.input);
      // A read-only reader never checkpoints: the writer's frames are still in the WAL.
      expect(statSync(`${db}-wal`).size).toBe(walBefore);
    } finally {
      await writer.release();
    }
  });

  it('counts only what happened within --from/--until and ends every series at --until', async () => {
    const dir = scratchDir('backfill-range-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 23, rows);
    const until = T0 + 3600;
    const ran = await backfill(['--state-db', join(dir, 'state.db'), '--from', String(T0), '--until', String(until), '--out', join(dir, 'out')]);
    expect(ran.code, ran.stderr).toBe(0);
    const text = readOpenMetrics(join(dir, 'out'));
    expect(lastTotal(text, 'hermes_sessions_started_total')).toBe(1);
    expect(lastTotal(text, 'hermes_tokens_total', 'token_type="input"')).toBe(10);
    expect(lastTotal(text, 'hermes_cost_usd_total')).toBe(0.5);
    const times = text.split('\n').filter((line) => line.startsWith('hermes_')).map((line) => Number(line.split(' ').at(-1)));
    expect(Math.max(...times)).toBe(until);
    expect(ran.stdout).toContain('Left out: 3 outside --from/--until');
    for (const file of openMetricsFiles(join(dir, 'out'))) expect(readFileSync(file, 'utf8').endsWith('# EOF\n')).toBe(true);
    expect(text).not.toContain(SENTINEL);
  });

  it('keeps each series\' samples in time order, starting at 0', async () => {
    const dir = scratchDir('backfill-order-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, rows);
    expect((await backfill(['--state-db', join(dir, 'state.db'), '--until', String(T0 + 2 * 86_400), '--out', join(dir, 'out')])).code).toBe(0);
    const bySeries = new Map<string, { t: number; v: number }[]>();
    for (const line of readOpenMetrics(join(dir, 'out')).split('\n')) {
      if (line.startsWith('#') || line === '') continue;
      const [value, time] = line.slice(line.lastIndexOf('} ') + 2).split(' ').map(Number);
      const key = line.slice(0, line.lastIndexOf('} '));
      bySeries.set(key, [...(bySeries.get(key) ?? []), { t: time ?? Number.NaN, v: value ?? Number.NaN }]);
    }
    expect(bySeries.size).toBeGreaterThan(10);
    for (const [key, samples] of bySeries) {
      expect(samples[0]?.v, key).toBe(0);
      for (let i = 1; i < samples.length; i += 1) {
        expect(samples[i]!.t, key).toBeGreaterThan(samples[i - 1]!.t);
        expect(samples[i]!.v, key).toBeGreaterThanOrEqual(samples[i - 1]!.v);
      }
    }
  });

  it('refuses an output directory that already holds a backfill', async () => {
    const dir = scratchDir('backfill-again-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, rows);
    expect((await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'out')])).code).toBe(0);
    const again = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'out')]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^backfill: --out already holds a backfill/);
  });

  it('prints the promtool command when promtool is not on the PATH', async () => {
    const dir = scratchDir('backfill-nopromtool-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, rows);
    const ran = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'out')]);
    expect(ran.stdout).toContain(`for f in ${join(dir, 'out', 'openmetrics')}/*.om; do promtool tsdb create-blocks-from openmetrics --max-block-duration=162h "$f" ${join(dir, 'out', 'blocks')} || break; done`);
    expect(existsSync(join(dir, 'out', 'blocks'))).toBe(false);
  });

  it('draws a progress line only on a terminal', async () => {
    const dir = scratchDir('backfill-tty-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, rows);
    const onTerminal = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'tty')], { tty: true, io: { progressEveryRows: 2 } });
    expect(onTerminal.stderr).toBe('\rbackfill: read 2 rows\rbackfill: read 4 rows\rbackfill: read 5 rows\n');
    const piped = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'pipe')], { io: { progressEveryRows: 2 } });
    expect(piped.stderr).toBe('');
  });
});

describe('backfill without a database or the binding', () => {
  it('says where it looked for none found (exit 2)', async () => {
    const dir = scratchDir('backfill-none-');
    const ran = await backfill(['--hermes-home', dir, '--out', join(dir, 'out')]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^backfill: No session database found: give --state-db PATH or --hermes-home DIR/);
  });

  it('names the one command that installs the SQLite binding when it is missing (exit 1)', async () => {
    const dir = scratchDir('backfill-nobinding-');
    writeFileSync(join(dir, 'state.db'), '');
    const missing = () => Promise.reject(new Error('Cannot find package'));
    const { loadBinding } = await import('../../../src/cli/backfill/sqlite.js');
    const ran = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'out')], { io: { loadBinding: () => loadBinding(missing) } });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('npm install better-sqlite3@12.11.1');
  });

  it('answers --help on stdout and a bad option with one line: a suggestion and a pointer to --help (exit 2)', async () => {
    expect((await backfill(['--help'])).stdout).toMatch(/^Usage: hermes-prometheus-sidecar backfill /);
    const typo = await backfill(['--untill', '0']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe('backfill: --untill is not an option: did you mean --until? (see backfill --help)\n');
    const bogus = await backfill(['--bogus']);
    expect(bogus.stderr).toBe('backfill: --bogus is not an option (see backfill --help)\n');
  });
});
