/**
 * The TSDB step: `promtool tsdb create-blocks-from openmetrics`, when promtool is on the PATH,
 * and the copy step the user runs next (printed, never done: Prometheus' data directory is theirs).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { BackfillError } from './errors.js';
import { BLOCK_WINDOW_FLAG } from './openmetrics.js';

/** The first executable `promtool` on PATH. */
export function findOnPath(command: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

const MAX_ERROR_CHARS = 400;

/** One promtool run per window file, in time order; `onFile` after each (progress). */
export async function createAllBlocks(promtool: string, files: readonly string[], blocksDir: string, onFile: (done: number) => void): Promise<void> {
  for (const [index, file] of files.entries()) {
    await createBlocks(promtool, file, blocksDir);
    onFile(index + 1);
  }
}

export function createBlocks(promtool: string, openMetricsFile: string, blocksDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(promtool, ['tsdb', 'create-blocks-from', 'openmetrics', '--quiet', BLOCK_WINDOW_FLAG, openMetricsFile, blocksDir], { maxBuffer: 16 << 20 }, (error, _stdout, stderr) => {
      if (error === null) {
        resolve();
        return;
      }
      // The input holds only the history's own metric names and label values, so promtool's
      // complaint about it carries no database content.
      const detail = String(stderr).trim().slice(0, MAX_ERROR_CHARS) || `exit ${String(error.code)}`;
      reject(new BackfillError('promtool_failed', `promtool could not create blocks from the OpenMetrics file: ${detail}`));
    });
  });
}

/**
 * How to serve the blocks: copied into Prometheus' data directory and given that directory's
 * owner (a copy made as root stays root's, and Prometheus, running as its own user, then fails
 * every compaction with "permission denied").
 */
export function copyStep(blocksDir: string, blocks: number): string {
  return [
    `TSDB blocks written to ${blocksDir} (${blocks}). To serve them, with DATA the --storage.tsdb.path of Prometheus (Debian: /var/lib/prometheus/metrics2):`,
    `  for b in ${blocksDir}/*/; do cp -r "$b" "$DATA"/ && chown -R --reference="$DATA" "$DATA/$(basename "$b")" || break; done`,
    '  (the chown gives the blocks the data directory\'s owner, so Prometheus can compact and delete them), then restart',
    '  Prometheus. Prometheus 2.39 and later (Debian 12\'s 2.42 included) merge blocks that overlap existing ones by',
    '  themselves; 2.38 and earlier need --storage.tsdb.allow-overlapping-blocks. Blocks older than',
    '  --storage.tsdb.retention.time (15d by default) are deleted at once: raise it to keep the history.',
    '',
  ].join('\n');
}

export function manualStep(openMetricsDir: string, blocksDir: string): string {
  return [
    'promtool is not on the PATH, so no blocks were made. With promtool (Debian package prometheus):',
    `  for f in ${openMetricsDir}/*.om; do promtool tsdb create-blocks-from openmetrics ${BLOCK_WINDOW_FLAG} "$f" ${blocksDir} || break; done`,
    '  and then copy the blocks as `backfill` prints when promtool is there (see README, "History from the session database").',
    '',
  ].join('\n');
}
