/**
 * Series by label values, one Map level per label, the last level holding the series: a write
 * finds its series with one lookup per label and builds nothing. Label values reaching storage
 * are mostly the same string objects every time (the label guard's and the closed sets'), whose
 * hashes V8 keeps, where a joined key string was a new string to build, flatten and hash on every
 * write. Unlabelled families keep their one series under ''.
 */
import type { Labels } from './series.js';

export class SeriesIndex<S> {
  private readonly root = new Map<string, unknown>();

  constructor(private readonly labelNames: readonly string[]) {}

  find(labels: Labels): S | undefined {
    const names = this.labelNames;
    const last = names.length - 1;
    let level = this.root;
    for (let index = 0; index < last; index += 1) {
      const next = level.get(labels[names[index] as string] ?? '') as Map<string, unknown> | undefined;
      if (next === undefined) return undefined;
      level = next;
    }
    return level.get(last < 0 ? '' : (labels[names[last] as string] ?? '')) as S | undefined;
  }

  /** The same lookup by values in label-name order. */
  findValues(values: readonly string[]): S | undefined {
    const last = values.length - 1;
    let level = this.root;
    for (let index = 0; index < last; index += 1) {
      const next = level.get(values[index] as string) as Map<string, unknown> | undefined;
      if (next === undefined) return undefined;
      level = next;
    }
    return level.get(last < 0 ? '' : (values[last] as string)) as S | undefined;
  }

  add(values: readonly string[], series: S): void {
    const last = values.length - 1;
    let level = this.root;
    for (let index = 0; index < last; index += 1) {
      const value = values[index] as string;
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) level.set(value, (next = new Map<string, unknown>()));
      level = next;
    }
    level.set(last < 0 ? '' : (values[last] as string), series);
  }

  /** Removes the series of these values, and every level left empty by it. */
  delete(values: readonly string[]): void {
    const last = values.length - 1;
    const path: Map<string, unknown>[] = [this.root];
    for (let index = 0; index < last; index += 1) {
      const next = path[index]?.get(values[index] as string) as Map<string, unknown> | undefined;
      if (next === undefined) return;
      path.push(next);
    }
    path[last < 0 ? 0 : last]?.delete(last < 0 ? '' : (values[last] as string));
    for (let index = last - 1; index >= 0; index -= 1) {
      if ((path[index + 1]?.size ?? 0) > 0) return;
      path[index]?.delete(values[index] as string);
    }
  }
}
