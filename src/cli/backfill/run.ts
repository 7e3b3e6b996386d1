/**
 * `hermes-prometheus-sidecar backfill`: every database is opened and its schema checked before
 * anything is written, then each table is read in one read transaction into the history's
 * counters, written as OpenMetrics and, with promtool on the PATH, turned into TSDB blocks.
 * Output names only counts, profile names and the user's own output paths, never content.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BACKFILL_HELP, parseBackfillArgs } from './args.js';
import { chosenDatabases, hermesHomeOf, type StateDatabase } from './databases.js';
import { BackfillError } from './errors.js';
import { HISTORY_FAMILIES, HistoryBuilder } from './history.js';
import { writeOpenMetrics } from './openmetrics.js';
import { copyStep, createAllBlocks, findOnPath, manualStep } from './promtool.js';
import { readMessages, readSessions, readUsage } from './read.js';
import { detectSchema, type Schema } from './schema.js';
import { loadBinding, openReadOnly, type Database } from './sqlite.js';

export interface BackfillIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal: the progress line is drawn only there. */
  readonly stderrIsTTY: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly nowMs: () => number;
  readonly loadBinding?: typeof loadBinding;
  /** Rows between redraws of the progress line (default 50,000). */
  readonly progressEveryRows?: number;
}

const PROGRESS_EVERY_ROWS = 50_000;

interface Opened {
  readonly source: StateDatabase;
  readonly label: string;
  readonly db: Database;
  readonly schema: Schema;
}

export async function runBackfill(argv: readonly string[], io: BackfillIo): Promise<number> {
  const opened: Opened[] = [];
  try {
    const args = parseBackfillArgs(argv, io.nowMs());
    if (args.help) {
      io.stdout(BACKFILL_HELP);
      return 0;
    }
    const sources = chosenDatabases(args.stateDbs, hermesHomeOf(io.env, args.hermesHome));
    if (sources.length === 0) throw new BackfillError('no_database', 'No session database found: give --state-db PATH or --hermes-home DIR (Hermes keeps state.db in its home and in profiles/<name>/).');
    const openMetricsDir = join(args.outDir, 'openmetrics');
    const blocksDir = join(args.outDir, 'blocks');
    refuseExistingOutput(openMetricsDir, blocksDir);
    const Sqlite = await (io.loadBinding ?? loadBinding)();
    // Every database must be understood before anything is written.
    sources.forEach((source, index) => {
      const label = `profile "${source.profile}" (database ${index + 1} of ${sources.length})`;
      const db = openReadOnly(Sqlite, source.path, label);
      opened.push({ source, label, db, schema: detectSchema(db, label) });
    });
    const history = new HistoryBuilder(args);
    const progress = progressLine(io);
    for (const { source, db, schema } of opened) {
      readSessions(db, schema, (row) => progress.tick(() => history.session(source.profile, row)));
      readUsage(db, (row) => progress.tick(() => history.usage(source.profile, row)));
      readMessages(db, (row) => progress.tick(() => history.message(source.profile, row)));
    }
    progress.done();
    mkdirSync(args.outDir, { recursive: true });
    const written = writeOpenMetrics(openMetricsDir, Object.values(HISTORY_FAMILIES), history.counters);
    io.stdout(summary(opened, progress.rows, history, written));
    io.stdout(`OpenMetrics written to ${openMetricsDir}/ (${written.files.length} files, one per 162 h block).\n`);
    const promtool = findOnPath('promtool', io.env.PATH);
    if (promtool === undefined) {
      io.stdout(manualStep(openMetricsDir, blocksDir));
      return 0;
    }
    await createAllBlocks(promtool, written.files, blocksDir, (done) => {
      if (io.stderrIsTTY) io.stderr(`\rbackfill: promtool ${done} of ${written.files.length} files${done === written.files.length ? '\n' : ''}`);
    });
    io.stdout(copyStep(blocksDir));
    return 0;
  } catch (error) {
    if (!(error instanceof BackfillError)) throw error;
    // One sentence and where to look, not 30 lines of usage burying it.
    io.stderr(`backfill: ${error.message}${error.code === 'usage' ? ' (see backfill --help)' : ''}\n`);
    return error.exitCode;
  } finally {
    for (const { db } of opened) db.close();
  }
}

function refuseExistingOutput(openMetricsDir: string, blocksDir: string): void {
  const blocksInUse = existsSync(blocksDir) && readdirSync(blocksDir).length > 0;
  if (existsSync(openMetricsDir) || blocksInUse) {
    throw new BackfillError('usage', '--out already holds a backfill (openmetrics/ or blocks/): choose an empty directory, so no earlier history is mixed in.');
  }
}

/** "read 1,250,000 rows" redrawn in place on a terminal every so many rows; nothing when stderr is not a terminal. */
function progressLine(io: BackfillIo) {
  const every = io.progressEveryRows ?? PROGRESS_EVERY_ROWS;
  let rows = 0;
  return {
    get rows() {
      return rows;
    },
    tick(apply: () => void) {
      apply();
      rows += 1;
      if (io.stderrIsTTY && rows % every === 0) io.stderr(`\rbackfill: read ${rows.toLocaleString('en-US')} rows`);
    },
    done() {
      if (io.stderrIsTTY && rows >= every) io.stderr(`\rbackfill: read ${rows.toLocaleString('en-US')} rows\n`);
    },
  };
}

function summary(opened: readonly Opened[], rows: number, history: HistoryBuilder, written: { readonly series: number; readonly samples: number; readonly bytes: number }): string {
  const lines = opened.map(({ label, schema }) => `Read ${label}: Hermes schema ${schema.version ?? 'unknown'}.`);
  lines.push(`${rows} rows became ${written.series} series, ${written.samples} samples (${written.bytes} bytes).`);
  const { outsideRange, noTime, badValue } = history.skipped;
  if (outsideRange + noTime + badValue > 0) lines.push(`Left out: ${outsideRange} outside --from/--until, ${noTime} without a valid time, ${badValue} values not a finite count >= 0.`);
  const folded = [...history.guardCounts.folded].map(([label, count]) => `${label} ${count}`);
  if (folded.length > 0) lines.push(`Label values folded into "other" by the label caps: ${folded.join(', ')}.`);
  return `${lines.join('\n')}\n`;
}
