/**
 * Hermes session databases for the backfill tests, made by test/fixtures/hermes_state_db.py with
 * Hermes' own table definitions (schema 23 or 30), every content column holding a sentinel.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const STATE_DB_SCRIPT = fileURLToPath(new URL('../fixtures/hermes_state_db.py', import.meta.url));
/** Every sentinel starts so; none may reach the backfill's output. */
export const SENTINEL = 'SENTINEL:';

/** The database's own totals, by SQL (hermes_state_db.py `totals`). */
export interface StateTotals {
  readonly sessions_started: number;
  readonly sessions_ended: number;
  readonly tokens: Readonly<Record<'input' | 'output' | 'cache_read' | 'cache_write' | 'reasoning', number>>;
  readonly cost_usd: number;
  readonly api_calls: number;
  readonly tool_messages: number;
  readonly finish_reasons: number;
}

export type Row = Readonly<Record<string, string | number | null>>;
export interface Rows {
  readonly sessions?: readonly Row[];
  readonly session_model_usage?: readonly Row[];
  readonly messages?: readonly Row[];
}

export function createStateDb(python: string, db: string, schema: 23 | 30, rows: Rows): StateTotals {
  const out = execFileSync(python, [STATE_DB_SCRIPT, 'create', '--schema', String(schema), '--db', db], { input: JSON.stringify(rows), encoding: 'utf8' });
  return JSON.parse(out) as StateTotals;
}

export function createUnknownDb(python: string, db: string): void {
  execFileSync(python, [STATE_DB_SCRIPT, 'unknown', '--db', db]);
}

/** A writer that committed `rows` and keeps them in state.db-wal (never checkpointed) until released. */
export async function holdStateDb(python: string, db: string, rowsFile: string): Promise<{ totals: StateTotals; release: () => Promise<void> }> {
  const child: ChildProcess = spawn(python, [STATE_DB_SCRIPT, 'hold', '--schema', '30', '--db', db, '--rows', rowsFile], { stdio: ['pipe', 'pipe', 'inherit'] });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done === true) throw new Error('hermes_state_db.py hold ended before it was ready');
  const totals = JSON.parse(first.value) as StateTotals & { ready: boolean };
  return {
    totals,
    release: async () => {
      child.stdin!.end();
      await closed;
    },
  };
}

/** The backfill's OpenMetrics files (one per block window) in time order. */
export function openMetricsFiles(outDir: string): string[] {
  const dir = join(outDir, 'openmetrics');
  return readdirSync(dir).filter((name) => name.endsWith('.om')).sort().map((name) => join(dir, name));
}

/** All of the backfill's OpenMetrics text, window after window: each series' samples stay in time order. */
export function readOpenMetrics(outDir: string): string {
  return openMetricsFiles(outDir).map((file) => readFileSync(file, 'utf8')).join('');
}
