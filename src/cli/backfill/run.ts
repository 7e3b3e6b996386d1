/**
 * `hermes-prometheus-sidecar backfill`: the output directory and every database are checked
 * before anything is written, then the history is built and written one block window at a time
 * from the tables read in time order, and, with promtool on the PATH, turned into TSDB blocks.
 * Output names only counts, profile names and the user's own paths, never content.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BACKFILL_HELP, parseBackfillArgs, type BackfillArgs } from './args.js';
import { Cursor } from './cursor.js';
import { chosenDatabases, hermesHomeOf, type StateDatabase } from './databases.js';
import { asBackfillError, BackfillError } from './errors.js';
import { HISTORY_FAMILIES, HistoryBuilder } from './history.js';
import { MemoryBudget } from './memory.js';
import { OpenMetricsOutput } from './openmetrics.js';
import { prepareOut, type PreparedOut } from './output.js';
import { copyStep, createAllBlocks, findOnPath, manualStep } from './promtool.js';
import { messages, sessionEnds, sessionStarts, usage } from './read.js';
import { detectSchema, type Schema } from './schema.js';
import { loadBinding, openReadOnly, type Database } from './sqlite.js';
import { planWindows, RunTracker, windowDate, writeWindows } from './windows.js';

export interface BackfillIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal: the progress line is drawn only there. */
  readonly stderrIsTTY: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly nowMs: () => number;
  readonly loadBinding?: typeof loadBinding;
  /** Rows between memory checks and redraws of the progress line (default 16,384). */
  readonly checkEveryRows?: number;
  /** The process's resident memory in bytes (default: process.memoryUsage.rss). */
  readonly residentBytes?: () => number;
  /** The user the run writes as (default: process.getuid()). */
  readonly uid?: number;
}

interface Opened {
  readonly source: StateDatabase;
  readonly label: string;
  readonly schema: Schema;
}

type Sqlite = Awaited<ReturnType<typeof loadBinding>>;

export async function runBackfill(argv: readonly string[], io: BackfillIo): Promise<number> {
  const connections: Database[] = [];
  const cursors: Cursor[] = [];
  let out: PreparedOut | undefined;
  let output: OpenMetricsOutput | undefined;
  try {
    const args = parseBackfillArgs(argv, io.nowMs());
    if (args.help) {
      io.stdout(BACKFILL_HELP);
      return 0;
    }
    const sources = chosenDatabases(args.stateDbs, hermesHomeOf(io.env, args.hermesHome));
    if (sources.length === 0) throw new BackfillError('no_database', 'No session database found: give --state-db PATH or --hermes-home DIR (Hermes keeps state.db in its home and in profiles/<name>/).');
    for (const { path } of sources) requireDatabaseFile(path);
    out = prepareOut(args.outDir, io.uid ?? process.getuid?.());
    const Sqlite = await (io.loadBinding ?? loadBinding)();
    // Every database must be understood before anything is written.
    const opened = sources.map((source, index) => {
      const label = `profile "${source.profile}" (database ${index + 1} of ${sources.length})`;
      const db = openReadOnly(Sqlite, source.path, label);
      connections.push(db);
      return { source, label, schema: detectSchema(db, label) };
    });
    const openMetricsDir = join(args.outDir, 'openmetrics');
    const history = new HistoryBuilder(args);
    for (const database of opened) cursors.push(...cursorsOf(Sqlite, database, history, connections));
    const tracker = new RunTracker(new MemoryBudget(args.maxMemoryBytes, io.residentBytes), progressLine(io), io.checkEveryRows);
    const plan = planWindows(cursors, args.fromMs, args.untilMs, tracker);
    output = new OpenMetricsOutput(openMetricsDir, Object.values(HISTORY_FAMILIES));
    writeWindows(cursors, plan, args.stepMs, history.counters, output, tracker);
    output.commit();
    io.stdout(summary(opened, tracker.rows, history, output));
    io.stdout(`OpenMetrics written to ${openMetricsDir}/ (${output.files.length} files, one per 162 h block with samples).\n`);
    return await makeBlocks(args, output.files, io);
  } catch (error) {
    output?.abort();
    out?.undo();
    const failure = asBackfillError(error);
    io.stderr(`backfill: ${failure.message}${failure.code === 'usage' ? ' See backfill --help.' : ''}\n`);
    return failure.exitCode;
  } finally {
    for (const cursor of cursors) cursor.stop();
    for (const db of connections) db.close();
  }
}

/** A --state-db that is not there is named, not reported as a database that cannot be read. */
function requireDatabaseFile(path: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new BackfillError('no_database', `The session database ${path} does not exist.`);
  }
  if (!isFile) throw new BackfillError('no_database', `The session database ${path} is not a file.`);
}

/** The four streams of one database, each on a read-only connection of its own. */
function cursorsOf(Sqlite: Sqlite, { source, label, schema }: Opened, history: HistoryBuilder, connections: Database[]): Cursor[] {
  const open = () => {
    const db = openReadOnly(Sqlite, source.path, label);
    connections.push(db);
    return db;
  };
  const profile = source.profile;
  return [
    Cursor.of(open(), sessionStarts(schema), true, (row) => history.sessionStarted(profile, row)),
    Cursor.of(open(), sessionEnds(schema), false, (row) => history.sessionEnded(profile, row)),
    Cursor.of(open(), usage, true, (row) => history.usage(profile, row)),
    Cursor.of(open(), messages, true, (row) => history.message(profile, row)),
  ];
}

async function makeBlocks(args: BackfillArgs, files: readonly string[], io: BackfillIo): Promise<number> {
  const openMetricsDir = join(args.outDir, 'openmetrics');
  const blocksDir = join(args.outDir, 'blocks');
  const promtool = findOnPath('promtool', io.env.PATH);
  if (promtool === undefined) {
    io.stdout(manualStep(openMetricsDir, blocksDir));
    return 0;
  }
  await createAllBlocks(promtool, files, blocksDir, (done) => {
    if (io.stderrIsTTY) io.stderr(`\rbackfill: promtool ${done} of ${files.length} files${done === files.length ? '\n' : ''}`);
  });
  io.stdout(copyStep(blocksDir, readdirSync(blocksDir).length));
  return 0;
}

/** "window 3 of 57 (from 2025-07-14), 1,250,000 rows" redrawn in place on a terminal; nothing when stderr is not a terminal. */
function progressLine(io: BackfillIo): (tracker: RunTracker) => void {
  return ({ plan, done, rows }) => {
    if (!io.stderrIsTTY || plan === undefined) return;
    const at = done < plan.total ? ` (from ${windowDate(plan.first + done)})` : '';
    io.stderr(`\rbackfill: window ${Math.min(done + 1, plan.total)} of ${plan.total}${at}, ${rows.toLocaleString('en-US')} rows${done === plan.total ? ', done\n' : ''}`);
  };
}

function summary(opened: readonly Opened[], rows: number, history: HistoryBuilder, written: OpenMetricsOutput): string {
  const lines = opened.map(({ label, schema }) => `Read ${label}: Hermes schema ${schema.version ?? 'unknown'}.`);
  lines.push(`${rows} rows became ${history.counters.size} series, ${written.samples} samples (${written.bytes} bytes).`);
  const { outsideRange, noTime, badValue } = history.skipped;
  if (outsideRange + noTime + badValue > 0) lines.push(`Left out: ${outsideRange} outside --from/--until, ${noTime} without a valid time, ${badValue} values not a finite count >= 0.`);
  const folded = [...history.guardCounts.folded].map(([label, count]) => `${label} ${count}`);
  if (folded.length > 0) lines.push(`Label values folded into "other" by the label caps: ${folded.join(', ')}.`);
  return `${lines.join('\n')}\n`;
}
