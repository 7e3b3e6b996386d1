/**
 * OpenMetrics text with timestamps, as `promtool tsdb create-blocks-from openmetrics` reads it:
 * one file per block window (promtool re-reads its whole input for every block it makes, so a
 * year in one file would be read once per block), written as soon as the window is built, each
 * with the families present in it (# TYPE, # HELP) and every family's lines together, each
 * series' samples in time order, `# EOF` last.
 * Files are written under a temporary directory name and renamed when the last window is
 * written, so an interrupted run leaves no half output.
 */
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { escapeLabelValue, formatValue } from '../../exposition/serializer.js';
import { BackfillError } from './errors.js';
import { sampleNames, type Family } from './history.js';
import type { CounterSet, Labels } from './series.js';

/**
 * The blocks' length, passed to promtool as --max-block-duration (promtool 2.42 has the flag
 * without listing it; by default it makes 2 h blocks, 4,380 for a year at about a second each).
 * promtool rounds the flag down to one of tsdb's block ranges (2 h × 3^n), so the windows are
 * one of those, 162 h (6.75 days): one file is then exactly one block, and retention, which
 * deletes whole blocks, stays fine-grained.
 */
export const BLOCK_WINDOW_MS = 162 * 3_600_000;
export const BLOCK_WINDOW_FLAG = '--max-block-duration=162h';

export const windowOf = (ms: number): number => Math.floor(ms / BLOCK_WINDOW_MS);

const labelText = (labels: Labels): string => (labels.length === 0 ? '' : `{${labels.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`);

/** Seconds with millisecond precision, exactly as stored (Prometheus keeps milliseconds). */
const timestamp = (ms: number): string => (ms / 1000).toFixed(3);

/** OpenMetrics names a counter family without its `_total`. */
const familyName = (family: Family): string => (family.type === 'counter' ? family.name.replace(/_total$/, '') : family.name);

/** The window files' name: the window's start, sortable. */
const fileName = (window: number): string => `${new Date(window * BLOCK_WINDOW_MS).toISOString().replace(/:/g, '').replace('.000Z', 'Z')}.om`;

const BUFFER_LIMIT = 1 << 20;

const writeFailed = (path: string, error: unknown): BackfillError => {
  const code = (error as { code?: unknown }).code;
  return new BackfillError('write_failed', `Writing ${path} failed (${typeof code === 'string' ? code : 'write error'}): nothing was kept.`);
};

/** The window files of one run, in `<dir>.partial` until `commit`. */
export class OpenMetricsOutput {
  readonly files: string[] = [];
  samples = 0;
  bytes = 0;
  private readonly temporary: string;

  constructor(
    private readonly dir: string,
    private readonly families: readonly Family[],
  ) {
    this.temporary = `${dir}.partial`;
    try {
      rmSync(this.temporary, { recursive: true, force: true });
      mkdirSync(this.temporary);
    } catch (error) {
      throw writeFailed(this.temporary, error);
    }
  }

  /** Writes the samples of `counters` before the window's end (all of them when `final`); no file for an empty window. */
  writeWindow(window: number, counters: CounterSet, final: boolean): void {
    const name = fileName(window);
    const path = join(this.temporary, name);
    const file = new BufferedFile(path);
    try {
      const endMs = final ? Number.POSITIVE_INFINITY : (window + 1) * BLOCK_WINDOW_MS;
      for (const family of this.families) {
        let header = `# TYPE ${familyName(family)} ${family.type}\n# HELP ${familyName(family)} ${family.help}\n`;
        for (const sampleName of sampleNames(family)) {
          for (const { labels, samples } of counters.drain(sampleName, endMs, final)) {
            file.write(header);
            header = '';
            const prefix = `${sampleName}${labelText(labels)} `;
            for (const { ms, value } of samples) file.write(`${prefix}${formatValue(value)} ${timestamp(ms)}\n`);
            this.samples += samples.length;
          }
        }
      }
      if (!file.opened) return;
      file.write('# EOF\n');
      this.bytes += file.close();
      this.files.push(join(this.dir, name));
    } catch (error) {
      file.discard();
      throw error instanceof BackfillError ? error : writeFailed(path, error);
    }
  }

  commit(): void {
    try {
      renameSync(this.temporary, this.dir);
    } catch (error) {
      throw writeFailed(this.dir, error);
    }
  }

  abort(): void {
    rmSync(this.temporary, { recursive: true, force: true });
  }
}

/** A file opened on its first line and written a megabyte at a time. */
class BufferedFile {
  private fd: number | undefined;
  private pending: string[] = [];
  private pendingLength = 0;
  private bytes = 0;

  constructor(private readonly path: string) {}

  get opened(): boolean {
    return this.fd !== undefined;
  }

  write(text: string): void {
    if (text === '') return;
    this.fd ??= openSync(this.path, 'wx');
    this.pending.push(text);
    this.pendingLength += text.length;
    if (this.pendingLength >= BUFFER_LIMIT) this.flush();
  }

  close(): number {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    return this.bytes;
  }

  discard(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private flush(): void {
    if (this.fd === undefined || this.pending.length === 0) return;
    const buffer = Buffer.from(this.pending.join(''), 'utf8');
    for (let offset = 0; offset < buffer.length; ) offset += writeSync(this.fd, buffer, offset);
    this.bytes += buffer.length;
    this.pending = [];
    this.pendingLength = 0;
  }
}
