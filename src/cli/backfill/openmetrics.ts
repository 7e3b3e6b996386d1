/**
 * OpenMetrics text with timestamps, as `promtool tsdb create-blocks-from openmetrics` reads it:
 * one family after another (# TYPE, # HELP), each series' samples in time order, `# EOF` last.
 * Written to a temporary name and renamed, so an interrupted run leaves no half file.
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { sampleNames, type Family } from './history.js';
import type { CounterSet, Labels, Sample } from './series.js';

const escapeValue = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

const labelText = (labels: Labels): string => (labels.length === 0 ? '' : `{${labels.map(([name, value]) => `${name}="${escapeValue(value)}"`).join(',')}}`);

/** Seconds with millisecond precision, exactly as stored (Prometheus keeps milliseconds). */
const timestamp = (ms: number): string => (ms / 1000).toFixed(3);

/** OpenMetrics names a counter family without its `_total`. */
const familyName = (family: Family): string => (family.type === 'counter' ? family.name.replace(/_total$/, '') : family.name);

const BUFFER_LIMIT = 1 << 20;

export interface WriteResult {
  readonly series: number;
  readonly samples: number;
  readonly bytes: number;
}

export function writeOpenMetrics(path: string, families: readonly Family[], counters: CounterSet): WriteResult {
  const temporary = `${path}.partial`;
  const fd = openSync(temporary, 'wx');
  let pending: string[] = [];
  let pendingLength = 0;
  let bytes = 0;
  const emit = (line: string) => {
    pending.push(line);
    pendingLength += line.length;
    if (pendingLength >= BUFFER_LIMIT) flush();
  };
  const flush = () => {
    bytes += writeSync(fd, pending.join(''));
    pending = [];
    pendingLength = 0;
  };
  let series = 0;
  let samples = 0;
  try {
    for (const family of families) {
      emit(`# TYPE ${familyName(family)} ${family.type}\n# HELP ${familyName(family)} ${family.help}\n`);
      for (const name of sampleNames(family)) {
        for (const { labels, samples: points } of counters.seriesOf(name)) {
          series += 1;
          samples += points.length;
          writeSeries(emit, name, labels, points);
        }
      }
    }
    emit('# EOF\n');
    flush();
    closeSync(fd);
    renameSync(temporary, path);
    return { series, samples, bytes };
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
}

function writeSeries(emit: (line: string) => void, name: string, labels: Labels, points: readonly Sample[]): void {
  const prefix = `${name}${labelText(labels)} `;
  for (const point of points) emit(`${prefix}${point.value} ${timestamp(point.ms)}\n`);
}
