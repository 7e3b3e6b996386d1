/**
 * The backfill's errors: a stable code, the exit status it gives and one sentence that never
 * quotes the database's content (only profile names, option names, column names and the paths
 * the user gave).
 *
 * Exit 2: the run could not start as asked (arguments, the output directory, the databases);
 * exit 1: it started and failed; nothing half-written is left either way.
 */

export const BACKFILL_ERRORS = {
  usage: 2,
  bad_out: 2,
  no_database: 2,
  unknown_schema: 2,
  not_readable: 1,
  no_binding: 1,
  over_memory: 1,
  write_failed: 1,
  promtool_failed: 1,
  internal: 1,
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

/** Any error as a BackfillError: one sentence with Node's error code, never a stack trace. */
export function asBackfillError(error: unknown): BackfillError {
  if (error instanceof BackfillError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  const detail = typeof code === 'string' ? code : error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new BackfillError('internal', `The backfill stopped on an unexpected error (${detail ?? 'unknown'}); nothing was kept.`);
}
