/**
 * Section 9, backfill: the time to turn a large Hermes session database (10,000 sessions,
 * 1,000,000 messages, Hermes' schema 30 table definitions, made by
 * test/fixtures/hermes_state_db.py) into OpenMetrics with the real CLI (dist/main.js), and the time
 * promtool then takes to make TSDB blocks of it. Informational: no target of its own.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTmp, fmt, fmtInt, fmtMiB, MAIN, nowMs, ROOT, table, track, type RunOptions, type SectionResult } from '../lib.js';
import { findPython, skipped } from './plugin.js';

const GNU_TIME = '/usr/bin/time';

interface Timed {
  readonly status: number | null;
  readonly seconds: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly maxRssBytes: number | undefined;
}

/** Runs to the end, timed, with peak RSS from GNU time when it is installed. */
function timed(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Timed> {
  const withTime = existsSync(GNU_TIME);
  const started = nowMs();
  const child = track(spawn(withTime ? GNU_TIME : command, withTime ? ['-f', 'MAXRSS_KB %M', command, ...args] : [...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => {
    child.once('close', (status) => {
      const rss = /MAXRSS_KB (\d+)/.exec(stderr)?.[1];
      resolve({ status, seconds: (nowMs() - started) / 1000, stdout, stderr, maxRssBytes: rss === undefined ? undefined : Number(rss) * 1024 });
    });
  });
}

/** The last sample of each series of `name`, summed: a series' total at --until. */
function lastTotal(openMetrics: string, name: string): number {
  const last = new Map<string, number>();
  for (const line of openMetrics.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const cut = line.lastIndexOf('} ');
    last.set(line.slice(0, cut), Number(line.slice(cut + 2).split(' ')[0]));
  }
  return [...last.values()].reduce((sum, value) => sum + value, 0);
}

export async function backfillSection(options: RunOptions): Promise<SectionResult> {
  const title = '9. Backfill from the session database';
  const python = findPython();
  if (python === undefined) return skipped('backfill', title, 'no python3');
  const sessions = options.smoke ? 200 : 10_000;
  const messages = options.smoke ? 20_000 : 1_000_000;
  // A year of history in the measured run; a week in the smoke run (two promtool runs, not 57).
  const days = options.smoke ? 7 : 365;
  const dir = mkdtempSync(join(ensureTmp(), 'backfill-'));
  try {
    const db = join(dir, 'state.db');
    const made = await timed(python, ['test/fixtures/hermes_state_db.py', 'generate', '--schema', '30', '--db', db, '--sessions', String(sessions), '--messages', String(messages), '--days', String(days)], process.env);
    if (made.status !== 0) throw new Error(`generating the database failed: ${made.stderr}`);
    const totals = JSON.parse(made.stdout) as { sessions_started: number; tool_messages: number };
    // Without promtool on the PATH: the CLI's own work only (read, build, write).
    const out = join(dir, 'out');
    const cli = await timed(process.execPath, [MAIN, 'backfill', '--state-db', db, '--until', '1790000000', '--out', out], { PATH: '', HOME: dir });
    if (cli.status !== 0) throw new Error(`backfill failed: ${cli.stderr}`);
    const files = readdirSync(join(out, 'openmetrics')).sort().map((name) => join(out, 'openmetrics', name));
    const text = files.map((file) => readFileSync(file, 'utf8')).join('');
    if (lastTotal(text, 'hermes_sessions_started_total') !== totals.sessions_started) throw new Error('backfill lost sessions');
    if (lastTotal(text, 'hermes_history_tool_calls_total') !== totals.tool_messages) throw new Error('backfill lost tool calls');
    const counts = /(\d+) rows became (\d+) series, (\d+) samples \((\d+) bytes\)/.exec(cli.stdout);
    // The promtool step as the CLI runs it (one run per 162 h window file), timed on its own.
    const withPromtool = join(dir, 'with-promtool');
    const blocks = await timed(process.execPath, [MAIN, 'backfill', '--state-db', db, '--until', '1790000000', '--out', withPromtool], { PATH: process.env.PATH, HOME: dir });
    const blockCount = blocks.status === 0 ? readdirSync(join(withPromtool, 'blocks')).length : undefined;
    const promtoolSeconds = blocks.seconds - cli.seconds;
    const rows = [
      ['database', `${fmtInt(sessions)} sessions, ${fmtInt(messages)} messages over ${days} days (${fmtMiB(Number(readFileSync(db).length))})`],
      ['backfill (read + build + write OpenMetrics)', `${fmt(cli.seconds, 2)} s`],
      ['backfill peak RSS', cli.maxRssBytes === undefined ? 'n/a (no GNU time)' : fmtMiB(cli.maxRssBytes)],
      ['rows read / series / samples', counts === null ? '?' : `${fmtInt(Number(counts[1]))} / ${fmtInt(Number(counts[2]))} / ${fmtInt(Number(counts[3]))}`],
      ['OpenMetrics size', counts === null ? '?' : fmtMiB(Number(counts[4]))],
      ['OpenMetrics files (one per 162 h block)', fmtInt(files.length)],
      ['backfill with promtool on the PATH (whole run)', blocks.status === 0 ? `${fmt(blocks.seconds, 2)} s, ${blockCount} blocks` : `failed (${blocks.stderr.trim().slice(0, 80)})`],
      ['of which promtool (difference)', blocks.status === 0 ? `${fmt(promtoolSeconds, 2)} s` : 'n/a'],
      ['generating the database (Python, not part of the backfill)', `${fmt(made.seconds, 1)} s`],
    ];
    return {
      key: 'backfill',
      title,
      summary: `${fmtInt(sessions)} sessions / ${fmtInt(messages)} messages backfilled in ${fmt(cli.seconds, 2)} s; with promtool's blocks ${blocks.status === 0 ? `${fmt(blocks.seconds, 2)} s` : 'n/a'}`,
      markdown: [
        'The real CLI (`node dist/main.js backfill`) on a generated schema-30 database (every session ended, one usage row per session, messages a third each user, assistant with a finish reason and tool results, spread over a year; a week in the smoke run): once with promtool off its PATH (read, build, write OpenMetrics), once with it (plus `promtool tsdb create-blocks-from openmetrics` per window file). The totals of sessions and tool calls in the output are checked against the database\'s own.',
        '',
        table(['', 'measured'], rows, ['l', 'r']),
      ].join('\n'),
      targets: [],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
