/**
 * OpenMetrics text with timestamps, as `promtool tsdb create-blocks-from openmetrics` reads it:
 * one file per block window (promtool re-reads its whole input for every block it makes, so a
 * year in one file would be read once per block), each with the families present in it (# TYPE,
 * # HELP), each series' samples in time order, `# EOF` last.
 * Files are written under a temporary directory name and renamed, so an interrupted run leaves
 * no half output.
 */
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { sampleNames, type Family } from './history.js';
import type { CounterSet, Labels, Sample } from './series.js';

/**
 * The blocks' length, passed to promtool as --max-block-duration (promtool 2.42 has the flag
 * without listing it; by default it makes 2 h blocks, 4,380 for a year at about a second each).
 * promtool rounds the flag down to one of tsdb's block ranges (2 h × 3^n), so the windows are
 * one of those, 162 h (6.75 days): one file is then exactly one block, and retention, which
 * deletes whole blocks, stays fine-grained.
 */
export const BLOCK_WINDOW_MS = 162 * 3_600_000;
export const BLOCK_WINDOW_FLAG = '--max-block-duration=162h';

const escapeValue = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

const labelText = (labels: Labels): string => (labels.length === 0 ? '' : `{${labels.map(([name, value]) => `${name}="${escapeValue(value)}"`).join(',')}}`);

/** Seconds with millisecond precision, exactly as stored (Prometheus keeps milliseconds). */
const timestamp = (ms: number): string => (ms / 1000).toFixed(3);

/** OpenMetrics names a counter family without its `_total`. */
const familyName = (family: Family): string => (family.type === 'counter' ? family.name.replace(/_total$/, '') : family.name);

const BUFFER_LIMIT = 1 << 20;

export interface WriteResult {
  readonly files: readonly string[];
  readonly series: number;
  readonly samples: number;
  readonly bytes: number;
}

interface Series {
  readonly family: number;
  readonly prefix: string;
  readonly samples: readonly Sample[];
}

/** Samples [start, end) of one series that fall in one window. */
type Slice = readonly [series: number, start: number, end: number];

const windowOf = (ms: number): number => Math.floor(ms / BLOCK_WINDOW_MS);

/** The window files' name: the window's start, sortable. */
const fileName = (window: number): string => `${new Date(window * BLOCK_WINDOW_MS).toISOString().replace(/:/g, '').replace('.000Z', 'Z')}.om`;

export function writeOpenMetrics(dir: string, families: readonly Family[], counters: CounterSet): WriteResult {
  const all: Series[] = [];
  families.forEach((family, index) => {
    for (const name of sampleNames(family)) {
      for (const { labels, samples } of counters.seriesOf(name)) all.push({ family: index, prefix: `${name}${labelText(labels)} `, samples });
    }
  });
  const windows = new Map<number, Slice[]>();
  all.forEach((series, index) => {
    let start = 0;
    while (start < series.samples.length) {
      const window = windowOf(series.samples[start]?.ms ?? 0);
      let end = start + 1;
      while (end < series.samples.length && windowOf(series.samples[end]?.ms ?? 0) === window) end += 1;
      let slices = windows.get(window);
      if (slices === undefined) windows.set(window, (slices = []));
      slices.push([index, start, end]);
      start = end;
    }
  });
  const temporary = `${dir}.partial`;
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  try {
    let bytes = 0;
    const files: string[] = [];
    for (const window of [...windows.keys()].sort((a, b) => a - b)) {
      const name = fileName(window);
      bytes += writeWindow(join(temporary, name), families, all, windows.get(window) ?? []);
      files.push(join(dir, name));
    }
    renameSync(temporary, dir);
    return { files, series: all.length, samples: all.reduce((sum, series) => sum + series.samples.length, 0), bytes };
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    throw error;
  }
}

function writeWindow(path: string, families: readonly Family[], all: readonly Series[], slices: readonly Slice[]): number {
  const fd = openSync(path, 'wx');
  let pending: string[] = [];
  let pendingLength = 0;
  let bytes = 0;
  const flush = () => {
    bytes += writeSync(fd, pending.join(''));
    pending = [];
    pendingLength = 0;
  };
  const emit = (line: string) => {
    pending.push(line);
    pendingLength += line.length;
    if (pendingLength >= BUFFER_LIMIT) flush();
  };
  try {
    let family = -1;
    // Slices are in series order, and series in family order: each family's lines stay together.
    for (const [index, start, end] of slices) {
      const series = all[index];
      if (series === undefined) continue;
      if (series.family !== family) {
        family = series.family;
        const spec = families[family];
        if (spec !== undefined) emit(`# TYPE ${familyName(spec)} ${spec.type}\n# HELP ${familyName(spec)} ${spec.help}\n`);
      }
      for (let i = start; i < end; i += 1) {
        const point = series.samples[i];
        if (point !== undefined) emit(`${series.prefix}${point.value} ${timestamp(point.ms)}\n`);
      }
    }
    emit('# EOF\n');
    flush();
    return bytes;
  } finally {
    closeSync(fd);
  }
}
