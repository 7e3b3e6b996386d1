/**
 * The row streams on a real session database (Hermes' table definitions, made by the Python
 * fixture) through the cursor that reads them: each stream in time order (SQLite puts NULL
 * before and text after the numbers), a cursor that stops at a moment and resumes there, values of the wrong type
 * read as missing, and no content column selected.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { Cursor } from '../../../src/cli/backfill/cursor.js';
import { messages, sessionEnds, sessionStarts, usage, type SessionRow } from '../../../src/cli/backfill/read.js';
import { detectSchema } from '../../../src/cli/backfill/schema.js';
import { openReadOnly } from '../../../src/cli/backfill/sqlite.js';
import { scratchDir } from '../../support/scratch.js';
import { createStateDb, type Rows } from '../../support/stateDb.js';
import { python3 } from '../../support/tools.js';

const python = python3();

const rows: Rows = {
  sessions: [
    { id: 'c', source: 'slack', started_at: 300, ended_at: 310, end_reason: 'user_exit', tool_call_count: 1 },
    { id: 'a', source: 'cli', started_at: 100, ended_at: 900, end_reason: 'user_exit', tool_call_count: 2 },
    { id: 'n', source: 'cli', started_at: 'never', ended_at: null, end_reason: null, tool_call_count: 0 },
    { id: 'b', source: 'telegram', started_at: 200, ended_at: 205, end_reason: 'compression', tool_call_count: 'many' },
  ],
  messages: [
    { session_id: 'a', role: 'tool', tool_name: 'terminal', timestamp: 150, finish_reason: null },
    { session_id: 'a', role: 'user', tool_name: null, timestamp: 120, finish_reason: null },
    { session_id: 'a', role: 'assistant', tool_name: null, timestamp: 110, finish_reason: 'stop' },
  ],
};

describe.skipIf(python.path === undefined)(`row streams${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  let path = '';
  beforeAll(() => {
    path = join(scratchDir('backfill-read-'), 'state.db');
    createStateDb(python.path ?? 'python3', path, 30, rows);
  });
  const open = () => openReadOnly(Database, path, 'profile "default" (database 1 of 1)');

  it('reads sessions by start (a time that is not a number last) and by end (ended ones only), values of the wrong type as missing', () => {
    const db = open();
    try {
      const schema = detectSchema(db, 'test');
      const starts: SessionRow[] = [];
      const ends: SessionRow[] = [];
      const counted: string[] = [];
      const byStart = Cursor.of(db, sessionStarts(schema), true, (row) => starts.push(row));
      byStart.readBefore(Number.POSITIVE_INFINITY, () => counted.push('start'));
      const second = open();
      Cursor.of(second, sessionEnds(schema), false, (row) => ends.push(row)).readBefore(Number.POSITIVE_INFINITY, () => counted.push('end'));
      second.close();
      expect(starts.map((row) => row.startedAt)).toEqual([100, 200, 300, undefined]);
      expect(ends.map((row) => [row.platform, row.endedAt, row.toolCalls])).toEqual([['telegram', 205, undefined], ['slack', 310, 1], ['cli', 900, 2]]);
      // A session is read twice and counted once.
      expect(counted).toEqual(['start', 'start', 'start', 'start']);
    } finally {
      db.close();
    }
  });

  it('stops before a moment and resumes there', () => {
    const db = open();
    try {
      const seen: (number | undefined)[] = [];
      const cursor = Cursor.of(db, messages, true, (row) => seen.push(row.timestamp));
      expect(cursor.nextMs()).toBe(110_000);
      cursor.readBefore(150_000, () => undefined);
      // The user message is no tool result and has no finish reason: not read at all.
      expect(seen).toEqual([110]);
      expect(cursor.nextMs()).toBe(150_000);
      cursor.readBefore(Number.POSITIVE_INFINITY, () => undefined);
      expect(seen).toEqual([110, 150]);
      expect(cursor.nextMs()).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('selects only content-free columns, each ordered by its time', () => {
    expect(sessionStarts({ version: 30, sessionToolCalls: true }).sql).toBe('SELECT source, started_at, ended_at, end_reason, tool_call_count FROM sessions ORDER BY started_at');
    expect(sessionEnds({ version: 23, sessionToolCalls: false }).sql).toBe('SELECT source, started_at, ended_at, end_reason, NULL FROM sessions WHERE ended_at IS NOT NULL ORDER BY ended_at');
    expect(usage.sql).toMatch(/ FROM session_model_usage ORDER BY last_seen$/);
    expect(messages.sql).toMatch(/^SELECT role, tool_name, timestamp, finish_reason FROM messages WHERE .* ORDER BY timestamp$/);
  });
});
