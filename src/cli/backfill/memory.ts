/**
 * The backfill's memory budget (--max-memory): the process's resident memory is checked while
 * rows are read and after each window is written, and past the budget the run stops with one
 * sentence, before the kernel or V8 stops it with a stack trace.
 */
import { BackfillError } from './errors.js';

export const DEFAULT_MAX_MEMORY_BYTES = 512 * 1024 * 1024;
/** Below this, Node.js alone would not fit. */
export const MIN_MAX_MEMORY_BYTES = 64 * 1024 * 1024;

const UNITS: ReadonlyMap<string, number> = new Map([
  ['', 1], ['B', 1],
  ['K', 1e3], ['KB', 1e3], ['Ki', 1024], ['KiB', 1024],
  ['M', 1e6], ['MB', 1e6], ['Mi', 1024 ** 2], ['MiB', 1024 ** 2],
  ['G', 1e9], ['GB', 1e9], ['Gi', 1024 ** 3], ['GiB', 1024 ** 3],
]);

/** `512Mi`, `512MiB`, `500MB`, `1G`, `1073741824`: whole bytes, or undefined when not a size. */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([A-Za-z]*)$/.exec(text.trim());
  const unit = match === null ? undefined : UNITS.get(match[2] ?? '');
  if (match === null || unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

export const mebibytes = (bytes: number): string => `${Math.round(bytes / 1024 ** 2)} MiB`;

export class MemoryBudget {
  constructor(
    private readonly limitBytes: number,
    private readonly residentBytes: () => number = () => process.memoryUsage.rss(),
  ) {}

  /** Throws `over_memory` when resident memory is past the budget; `where` says what was being built. */
  check(where: () => string): void {
    const resident = this.residentBytes();
    if (resident <= this.limitBytes) return;
    throw new BackfillError(
      'over_memory',
      `Memory use reached ${mebibytes(resident)}, over --max-memory ${mebibytes(this.limitBytes)}, while building ${where()}: raise --max-memory, or give a larger --step (fewer samples in a window).`,
    );
  }
}
