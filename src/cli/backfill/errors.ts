/**
 * The backfill's errors: a stable code, the exit status it gives and one sentence that never
 * quotes the database's content (only profile names, option names and column names).
 */

export const BACKFILL_ERRORS = {
  usage: 2,
  unknown_schema: 2,
  no_database: 2,
  not_readable: 1,
  no_binding: 1,
  write_failed: 1,
  promtool_failed: 1,
} as const;

export type BackfillErrorCode = keyof typeof BACKFILL_ERRORS;

export class BackfillError extends Error {
  readonly exitCode: number;

  constructor(
    readonly code: BackfillErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BackfillError';
    this.exitCode = BACKFILL_ERRORS[code];
  }
}
