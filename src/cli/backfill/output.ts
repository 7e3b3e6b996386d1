/**
 * The output directory, checked before any database is read: it must be a directory this user
 * can write (or be creatable in one), not a file, a special file or a dangling link, and hold no
 * earlier backfill. Inside Prometheus' own data directory it must belong to the same user as
 * that directory, or the blocks copied from it would not be Prometheus' own (compaction then
 * fails with "permission denied"). Each refusal is one sentence naming the path, exit 2.
 */
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, rmdirSync, statSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { BackfillError } from './errors.js';

const refuse = (message: string): BackfillError => new BackfillError('bad_out', message);

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'error';
};

function statOrUndefined(path: string, read: (path: string) => Stats): Stats | undefined {
  try {
    return read(path);
  } catch {
    return undefined;
  }
}

function kindOf(stats: Stats): string {
  if (stats.isFile()) return 'a file';
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a directory';
}

function requireWritable(dir: string, shown: string): void {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    throw refuse(`--out ${shown} cannot be written by this user (${dir} is not writable).`);
  }
}

/** A Prometheus data directory: it has a write-ahead log and a head chunks directory or a lock. */
function isPrometheusData(dir: string): boolean {
  return statOrUndefined(join(dir, 'wal'), statSync)?.isDirectory() === true && (existsSync(join(dir, 'chunks_head')) || existsSync(join(dir, 'lock')));
}

function requireOwnerOfPrometheusData(path: string, shown: string, uid: number | undefined): void {
  if (uid === undefined) return;
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    if (isPrometheusData(dir)) {
      const owner = statSync(dir).uid;
      if (owner !== uid) {
        throw refuse(`--out ${shown} is inside Prometheus' data directory ${dir}, owned by uid ${owner}, but this run is uid ${uid}: run the backfill as that user, or write elsewhere and copy the blocks as printed (with their owner set).`);
      }
      return;
    }
    if (dirname(dir) === dir) return;
  }
}

/** The directories of `outDir` that do not exist yet, outermost first, after checking the nearest one that does. */
function missingDirs(outDir: string): string[] {
  const missing: string[] = [];
  let dir = resolve(outDir);
  for (let stats = statOrUndefined(dir, lstatSync); stats === undefined; stats = statOrUndefined(dir, lstatSync)) {
    missing.unshift(dir);
    dir = dirname(dir);
  }
  const stats = statOrUndefined(dir, statSync);
  if (stats === undefined) throw refuse(`--out ${outDir} lies under ${dir}, a symbolic link to nothing.`);
  if (!stats.isDirectory()) throw refuse(`--out ${outDir} lies under ${dir}, which is ${kindOf(stats)}, not a directory.`);
  requireWritable(dir, outDir);
  return missing;
}

export interface PreparedOut {
  /** Removes the directories this run created, when it fails (only those still empty). */
  readonly undo: () => void;
}

/** Checks `outDir` and creates it (one level at a time, so a file system that refuses says so). */
export function prepareOut(outDir: string, uid: number | undefined): PreparedOut {
  const link = statOrUndefined(outDir, lstatSync);
  const stats = statOrUndefined(outDir, statSync);
  if (link?.isSymbolicLink() === true && stats === undefined) throw refuse(`--out ${outDir} is a symbolic link to nothing: give a directory.`);
  if (stats !== undefined && !stats.isDirectory()) throw refuse(`--out ${outDir} is ${kindOf(stats)}, not a directory.`);
  requireOwnerOfPrometheusData(join(outDir, 'blocks'), outDir, uid);
  if (stats !== undefined) {
    requireWritable(outDir, outDir);
    const blocks = join(outDir, 'blocks');
    if (existsSync(join(outDir, 'openmetrics')) || (existsSync(blocks) && readdirSync(blocks).length > 0)) {
      throw refuse(`--out ${outDir} already holds a backfill (openmetrics/ or blocks/): choose an empty directory, so no earlier history is mixed in.`);
    }
    return { undo: () => undefined };
  }
  const created: string[] = [];
  const undo = () => {
    for (const dir of [...created].reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        return;
      }
    }
  };
  for (const dir of missingDirs(outDir)) {
    try {
      mkdirSync(dir);
      created.push(dir);
    } catch (error) {
      undo();
      throw refuse(`--out ${outDir} cannot be created (${codeOf(error)} at ${dir}).`);
    }
  }
  return { undo };
}
