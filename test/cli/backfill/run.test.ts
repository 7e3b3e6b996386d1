/**
 * `backfill` in process on real SQLite files made by the Python fixture (Hermes' table
 * definitions): a schema it does not know, a database Hermes is still writing (rows only in the
 * WAL), the time range, a missing binding, and the output checks. The promtool and Prometheus
 * side is test/e2e/backfill.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
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
    expect(again.stderr).toBe(`backfill: --out ${join(dir, 'out')} already holds a backfill (openmetrics/ or blocks/): choose an empty directory, so no earlier history is mixed in.\n`);
  });

  it('places no sample before the epoch and reports exactly the samples it writes', async () => {
    // Rows 5 s and 12 s after the epoch with --until 10 s: the old leading 0 fell at -5 s and
    // promtool dropped it silently, so the reported count was not what Prometheus stored.
    const dir = scratchDir('backfill-epoch-');
    const early: Rows = {
      sessions: [{ id: 'e', source: 'cli', started_at: 5, ended_at: 8, end_reason: 'user_exit', tool_call_count: 0 }],
      messages: [{ session_id: 'e', role: 'tool', tool_name: 'terminal', timestamp: 0.0001, finish_reason: null }],
    };
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, early);
    const ran = await backfill(['--state-db', join(dir, 'state.db'), '--until', '10', '--out', join(dir, 'out')]);
    expect(ran.code, ran.stderr).toBe(0);
    const lines = readOpenMetrics(join(dir, 'out')).split('\n').filter((line) => line.startsWith('hermes_'));
    const times = lines.map((line) => Number(line.split(' ').at(-1)));
    expect(Math.min(...times)).toBe(0);
    expect(ran.stdout).toContain(`, ${lines.length} samples (`);
    // The message 0.1 ms after the epoch rounds to 0 ms: it has no time a sample can carry.
    expect(ran.stdout).toContain('Left out: 0 outside --from/--until, 1 without a valid time');
  });

  it('stops with one sentence past --max-memory and keeps nothing (exit 1)', async () => {
    const dir = scratchDir('backfill-memory-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, rows);
    const out = join(dir, 'deep', 'out');
    const ran = await backfill(['--state-db', join(dir, 'state.db'), '--max-memory', '256Mi', '--out', out], { io: { residentBytes: () => 300 * 1024 * 1024, checkEveryRows: 1 } });
    expect(ran).toEqual({
      code: 1,
      stdout: '',
      stderr: 'backfill: Memory use reached 300 MiB, over --max-memory 256 MiB, while building window 1 of 5 (from 2026-08-30): raise --max-memory, or give a larger --step (fewer samples in a window).\n',
    });
    expect(existsSync(join(dir, 'deep'))).toBe(false);
  });

  it('names a --state-db that does not exist (exit 2)', async () => {
    const dir = scratchDir('backfill-missing-');
    const ran = await backfill(['--state-db', join(dir, 'nonexistent.db'), '--out', join(dir, 'out')]);
    expect(ran).toEqual({ code: 2, stdout: '', stderr: `backfill: The session database ${join(dir, 'nonexistent.db')} does not exist.\n` });
  });

  it('checks --out before reading anything: a file, a dangling link and a special file are refused naming the path (exit 2)', async () => {
    const dir = scratchDir('backfill-out-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, rows);
    writeFileSync(join(dir, 'file'), 'x');
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    const cases: [string, string][] = [
      [join(dir, 'file'), `--out ${join(dir, 'file')} is a file, not a directory.`],
      [join(dir, 'dangling'), `--out ${join(dir, 'dangling')} is a symbolic link to nothing: give a directory.`],
      ['/dev/null', '--out /dev/null is a device, not a directory.'],
      [join(dir, 'file', 'below'), `--out ${join(dir, 'file', 'below')} lies under ${join(dir, 'file')}, which is a file, not a directory.`],
    ];
    for (const [out, sentence] of cases) expect(await backfill(['--state-db', join(dir, 'state.db'), '--out', out]), out).toEqual({ code: 2, stdout: '', stderr: `backfill: ${sentence}\n` });
    expect(readdirSync(dir).sort()).toEqual(['dangling', 'file', 'state.db']);
  });

  it('refuses --out inside Prometheus\' data directory when this user does not own it (exit 2)', async () => {
    const dir = scratchDir('backfill-owner-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, rows);
    const data = join(dir, 'metrics2');
    mkdirSync(join(data, 'wal'), { recursive: true });
    mkdirSync(join(data, 'chunks_head'));
    const owner = statSync(data).uid;
    const ran = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(data, 'history')], { io: { uid: owner + 1 } });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toBe(
      `backfill: --out ${join(data, 'history')} is inside Prometheus' data directory ${data}, owned by uid ${owner}, but this run is uid ${owner + 1}: run the backfill as that user, or write elsewhere and copy the blocks as printed (with their owner set).\n`,
    );
    expect(existsSync(join(data, 'history'))).toBe(false);
    // As the directory's owner the same --out is fine.
    expect((await backfill(['--state-db', join(dir, 'state.db'), '--out', join(data, 'history')], { io: { uid: owner } })).code).toBe(0);
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
    const onTerminal = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'tty')], { tty: true, io: { checkEveryRows: 2 } });
    // The rows fall in the window from 2026-08-30 (windows are 162 h from the epoch); --until (2026-09-30) is four windows later.
    // Windows 2 to 4 hold nothing: the line jumps to the last, which holds the samples at --until.
    expect(onTerminal.stderr).toBe(
      '\rbackfill: window 1 of 5 (from 2026-08-30), 2 rows\rbackfill: window 1 of 5 (from 2026-08-30), 4 rows' +
        '\rbackfill: window 5 of 5 (from 2026-09-26), 5 rows\rbackfill: window 5 of 5, 5 rows, done\n',
    );
    const piped = await backfill(['--state-db', join(dir, 'state.db'), '--out', join(dir, 'pipe')], { io: { checkEveryRows: 2 } });
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

  it.each([
    [['--until', '9000000000000'], '--until must be an RFC 3339 time (2026-07-01T00:00:00Z) or Unix seconds, from 1970 to 9999. See backfill --help.'],
    [['--from', '10000-01-01T00:00:00Z'], '--from must be an RFC 3339 time (2026-07-01T00:00:00Z) or Unix seconds, from 1970 to 9999. See backfill --help.'],
    [['--max-memory', 'lots'], '--max-memory must be a size of at least 64 MiB, such as 512Mi, 1Gi or 800MB. See backfill --help.'],
  ])('answers %j with one sentence and exit 2, never a stack trace', async (...argv) => {
    const [args, sentence] = argv;
    expect(await backfill(args)).toEqual({ code: 2, stdout: '', stderr: `backfill: ${sentence}\n` });
  });

  it('answers --help on stdout and a bad option with a suggestion and the usage (exit 2)', async () => {
    expect((await backfill(['--help'])).stdout).toMatch(/^Usage: hermes-prometheus-sidecar backfill /);
    const typo = await backfill(['--untill', '0']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe('backfill: --untill is not an option: did you mean --until? See backfill --help.\n');
  });
});
