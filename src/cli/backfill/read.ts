/**
 * The rows the history is built from, each table read in one read transaction with an explicit,
 * content-free column list (never `SELECT *`): values arrive as SQLite stored them, so each is
 * checked for its type here and anything else becomes undefined.
 */
import type { Schema } from './schema.js';
import { inReadTransaction, type Database } from './sqlite.js';

export interface SessionRow {
  readonly platform: string | undefined;
  /** Seconds since the epoch, as Hermes stores them (REAL). */
  readonly startedAt: number | undefined;
  readonly endedAt: number | undefined;
  readonly endReason: string | undefined;
  readonly toolCalls: number | undefined;
}

export interface UsageRow {
  readonly model: string | undefined;
  readonly provider: string | undefined;
  /** '' for the main agent loop; 'vision', 'compression', ... for auxiliary calls. */
  readonly task: string | undefined;
  readonly apiCalls: number | undefined;
  readonly input: number | undefined;
  readonly output: number | undefined;
  readonly cacheRead: number | undefined;
  readonly cacheWrite: number | undefined;
  readonly reasoning: number | undefined;
  readonly estimatedCostUsd: number | undefined;
  readonly costStatus: string | undefined;
  readonly lastSeen: number | undefined;
}

export interface MessageRow {
  readonly role: string | undefined;
  readonly toolName: string | undefined;
  readonly timestamp: number | undefined;
  readonly finishReason: string | undefined;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

function each(db: Database, sql: string, visit: (row: unknown[]) => void): void {
  inReadTransaction(db, () => {
    for (const row of db.prepare(sql).raw(true).iterate()) visit(row as unknown[]);
  });
}

export function readSessions(db: Database, schema: Schema, visit: (row: SessionRow) => void): void {
  const toolCalls = schema.sessionToolCalls ? 'tool_call_count' : 'NULL';
  each(db, `SELECT source, started_at, ended_at, end_reason, ${toolCalls} FROM sessions`, (row) =>
    visit({ platform: text(row[0]), startedAt: num(row[1]), endedAt: num(row[2]), endReason: text(row[3]), toolCalls: num(row[4]) }),
  );
}

export function readUsage(db: Database, visit: (row: UsageRow) => void): void {
  const sql =
    'SELECT model, billing_provider, task, api_call_count, input_tokens, output_tokens, cache_read_tokens, ' +
    'cache_write_tokens, reasoning_tokens, estimated_cost_usd, cost_status, last_seen FROM session_model_usage';
  each(db, sql, (row) =>
    visit({
      model: text(row[0]),
      provider: text(row[1]),
      task: text(row[2]),
      apiCalls: num(row[3]),
      input: num(row[4]),
      output: num(row[5]),
      cacheRead: num(row[6]),
      cacheWrite: num(row[7]),
      reasoning: num(row[8]),
      estimatedCostUsd: num(row[9]),
      costStatus: text(row[10]),
      lastSeen: num(row[11]),
    }),
  );
}

/** Only the messages that count: tool results and messages with a finish reason. */
export function readMessages(db: Database, visit: (row: MessageRow) => void): void {
  const sql =
    "SELECT role, tool_name, timestamp, finish_reason FROM messages WHERE role = 'tool' OR (finish_reason IS NOT NULL AND finish_reason <> '')";
  each(db, sql, (row) => visit({ role: text(row[0]), toolName: text(row[1]), timestamp: num(row[2]), finishReason: text(row[3]) }));
}
