/**
 * A stream of rows read as far as a moment and no further: one statement on a connection of its
 * own (better-sqlite3 runs one statement per connection at a time, and the four streams of a
 * database advance together), holding the row that is next. A row without a numeric time is
 * applied whenever it comes (the history only counts it as left out): SQLite orders NULL before
 * the numbers and text after them.
 */
import { num, type RowStream } from './read.js';
import type { Database } from './sqlite.js';

export class Cursor {
  private readonly rows: Iterator<unknown[]>;
  private head: unknown[] | undefined;

  private constructor(
    db: Database,
    sql: string,
    private readonly timeColumn: number,
    /** Whether the stream's rows count in the summary (a session is read twice, counted once). */
    private readonly countsRows: boolean,
    private readonly apply: (raw: readonly unknown[]) => void,
  ) {
    this.rows = db.prepare(sql).raw(true).iterate() as Iterator<unknown[]>;
    this.advance();
  }

  static of<Row>(db: Database, stream: RowStream<Row>, countsRows: boolean, visit: (row: Row) => void): Cursor {
    return new Cursor(db, stream.sql, stream.timeColumn, countsRows, (raw) => visit(stream.row(raw)));
  }

  /** The time of the next row in ms, −∞ when it has no valid time, undefined when there is none. */
  nextMs(): number | undefined {
    if (this.head === undefined) return undefined;
    const seconds = num(this.head[this.timeColumn]);
    return seconds === undefined ? Number.NEGATIVE_INFINITY : Math.round(seconds * 1000);
  }

  /** Applies every row before `limitMs` (and every row without a valid time); `onRow` after each counted row. */
  readBefore(limitMs: number, onRow: () => void): void {
    for (let ms = this.nextMs(); ms !== undefined && ms < limitMs; ms = this.nextMs()) {
      this.apply(this.head ?? []);
      this.advance();
      if (this.countsRows) onRow();
    }
  }

  /** Ends the statement, so its connection can be closed. */
  stop(): void {
    this.rows.return?.();
    this.head = undefined;
  }

  private advance(): void {
    const next = this.rows.next();
    this.head = next.done === true ? undefined : next.value;
  }
}
