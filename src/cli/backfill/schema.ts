/**
 * What a session database holds, told by its tables' columns (Hermes adds columns declaratively,
 * so column presence, not the schema_version number, says what can be read). The columns read
 * are content-free by choice: ids, platform, model and provider names, times, counts, tokens and
 * costs; never message text, prompts, titles, working directories, git fields, user or chat ids,
 * display names or origin JSON.
 */
import { BackfillError } from './errors.js';
import type { Database } from './sqlite.js';

/** Columns without which the history cannot be built (present from Hermes schema 23 on). */
export const REQUIRED_COLUMNS = {
  sessions: ['id', 'source', 'started_at', 'ended_at', 'end_reason'],
  session_model_usage: [
    'session_id', 'model', 'billing_provider', 'task', 'api_call_count', 'input_tokens', 'output_tokens',
    'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'estimated_cost_usd', 'cost_status', 'last_seen',
  ],
  messages: ['session_id', 'role', 'tool_name', 'timestamp', 'finish_reason'],
} as const;

/** Columns read when present. */
export const OPTIONAL_COLUMNS = {
  sessions: ['tool_call_count'],
} as const;

export type Table = keyof typeof REQUIRED_COLUMNS;

export interface Schema {
  /** Hermes' schema_version row, when there is one (for the summary only). */
  readonly version: number | undefined;
  readonly sessionToolCalls: boolean;
}

function columnsOf(db: Database, table: string): Set<string> {
  const rows = db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: unknown }[];
  return new Set(rows.map((row) => row.name).filter((name): name is string => typeof name === 'string'));
}

function schemaVersion(db: Database): number | undefined {
  if (columnsOf(db, 'schema_version').size === 0) return undefined;
  const row = db.prepare('SELECT version FROM schema_version LIMIT 1').get() as { version?: unknown } | undefined;
  return typeof row?.version === 'number' && Number.isSafeInteger(row.version) ? row.version : undefined;
}

/** The schema, or one sentence naming the first missing table or column (exit 2). */
export function detectSchema(db: Database, label: string): Schema {
  for (const [table, required] of Object.entries(REQUIRED_COLUMNS)) {
    const present = columnsOf(db, table);
    const problem = present.size === 0 ? `it has no ${table} table` : required.filter((column) => !present.has(column)).map((column) => `table ${table} has no column ${column}`)[0];
    if (problem !== undefined) {
      throw new BackfillError('unknown_schema', `The session database of ${label} is not a Hermes session database this version understands: ${problem}.`);
    }
  }
  return { version: schemaVersion(db), sessionToolCalls: columnsOf(db, 'sessions').has('tool_call_count') };
}
