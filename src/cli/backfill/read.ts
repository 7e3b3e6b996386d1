/**
 * The rows the history is built from, as streams in time order: one statement per stream with an
 * explicit, content-free column list (never `SELECT *`), ordered by the time the row counts at,
 * so the history can be built one window at a time. Values arrive as SQLite stored them, so each
 * is checked for its type here and anything else becomes undefined. A session counts twice: when
 * it starts and when it ends, so sessions are read as two streams.
 */
import type { Schema } from './schema.js';

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

export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** One stream: its statement, which column is its time (seconds), and what a row becomes. */
export interface RowStream<Row> {
  readonly sql: string;
  readonly timeColumn: number;
  readonly row: (raw: readonly unknown[]) => Row;
}

const sessionRow = (raw: readonly unknown[]): SessionRow => ({ platform: text(raw[0]), startedAt: num(raw[1]), endedAt: num(raw[2]), endReason: text(raw[3]), toolCalls: num(raw[4]) });

const sessionColumns = (schema: Schema): string => `source, started_at, ended_at, end_reason, ${schema.sessionToolCalls ? 'tool_call_count' : 'NULL'}`;

/** Every session, at its start. */
export const sessionStarts = (schema: Schema): RowStream<SessionRow> => ({ sql: `SELECT ${sessionColumns(schema)} FROM sessions ORDER BY started_at`, timeColumn: 1, row: sessionRow });

/** The sessions that ended, at their end. */
export const sessionEnds = (schema: Schema): RowStream<SessionRow> => ({
  sql: `SELECT ${sessionColumns(schema)} FROM sessions WHERE ended_at IS NOT NULL ORDER BY ended_at`,
  timeColumn: 2,
  row: sessionRow,
});

export const usage: RowStream<UsageRow> = {
  sql:
    'SELECT model, billing_provider, task, api_call_count, input_tokens, output_tokens, cache_read_tokens, ' +
    'cache_write_tokens, reasoning_tokens, estimated_cost_usd, cost_status, last_seen FROM session_model_usage ORDER BY last_seen',
  timeColumn: 11,
  row: (raw) => ({
    model: text(raw[0]),
    provider: text(raw[1]),
    task: text(raw[2]),
    apiCalls: num(raw[3]),
    input: num(raw[4]),
    output: num(raw[5]),
    cacheRead: num(raw[6]),
    cacheWrite: num(raw[7]),
    reasoning: num(raw[8]),
    estimatedCostUsd: num(raw[9]),
    costStatus: text(raw[10]),
    lastSeen: num(raw[11]),
  }),
};

/** Only the messages that count: tool results and messages with a finish reason. */
export const messages: RowStream<MessageRow> = {
  sql: "SELECT role, tool_name, timestamp, finish_reason FROM messages WHERE role = 'tool' OR (finish_reason IS NOT NULL AND finish_reason <> '') ORDER BY timestamp",
  timeColumn: 2,
  row: (raw) => ({ role: text(raw[0]), toolName: text(raw[1]), timestamp: num(raw[2]), finishReason: text(raw[3]) }),
};
