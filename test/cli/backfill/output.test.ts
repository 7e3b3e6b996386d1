/**
 * The output directory's checks, before any database is read: what is refused (each one sentence
 * naming the path, exit 2), what is created one level at a time (so a file system that refuses
 * mkdir says so instead of looping), and undo removing only what the run created.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BackfillError } from '../../../src/cli/backfill/errors.js';
import { prepareOut } from '../../../src/cli/backfill/output.js';
import { scratchDir } from '../../support/scratch.js';

const refusal = (run: () => unknown): BackfillError => {
  try {
    run();
  } catch (error) {
    if (error instanceof BackfillError) return error;
    throw error;
  }
  throw new Error('not refused');
};

describe('--out', () => {
  it('creates a missing directory level by level and undo removes exactly those levels', () => {
    const base = scratchDir('backfill-out-create-');
    const prepared = prepareOut(join(base, 'a', 'b', 'c'), undefined);
    expect(readdirSync(join(base, 'a', 'b'))).toEqual(['c']);
    writeFileSync(join(base, 'keep'), '');
    prepared.undo();
    expect(readdirSync(base)).toEqual(['keep']);
  });

  it('accepts an existing empty directory, and undo leaves it', () => {
    const base = scratchDir('backfill-out-existing-');
    prepareOut(base, undefined).undo();
    expect(readdirSync(base)).toEqual([]);
  });

  it('refuses, without a loop, a directory the file system will not create (exit 2)', () => {
    // /proc refuses mkdir with ENOENT, which Node's recursive mkdir retries for ever.
    const error = refusal(() => prepareOut('/proc/hermes-backfill/out', undefined));
    expect(error.exitCode).toBe(2);
    expect(error.code).toBe('bad_out');
    expect(error.message).toMatch(/^--out \/proc\/hermes-backfill\/out (cannot be created \(ENOENT at \/proc\/hermes-backfill\)|cannot be written by this user \(\/proc is not writable\))\.$/);
  });

  it('refuses a directory that already holds a backfill', () => {
    const base = scratchDir('backfill-out-again-');
    mkdirSync(join(base, 'blocks', '01ABC'), { recursive: true });
    expect(refusal(() => prepareOut(base, undefined)).message).toBe(`--out ${base} already holds a backfill (openmetrics/ or blocks/): choose an empty directory, so no earlier history is mixed in.`);
  });

  it('refuses a path inside a Prometheus data directory of another owner, at any depth', () => {
    const data = scratchDir('backfill-out-data-');
    mkdirSync(join(data, 'wal'));
    writeFileSync(join(data, 'lock'), '');
    const error = refusal(() => prepareOut(join(data, 'x', 'y'), 4_000_000_000));
    expect(error.message).toMatch(new RegExp(`^--out ${join(data, 'x', 'y')} is inside Prometheus' data directory ${data}, owned by uid \\d+, but this run is uid 4000000000: `));
    expect(readdirSync(data).sort()).toEqual(['lock', 'wal']);
  });
});
