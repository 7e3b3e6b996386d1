/**
 * The backfill's arguments: defaults, both time spellings and their range, repeated options,
 * byte sizes for --max-memory, and one sentence for each mistake.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TIME_MS, parseBackfillArgs } from '../../../src/cli/backfill/args.js';
import { BackfillError } from '../../../src/cli/backfill/errors.js';
import { DEFAULT_MAX_MEMORY_BYTES, parseByteSize } from '../../../src/cli/backfill/memory.js';

describe('arguments', () => {
  const now = Date.UTC(2026, 8, 30);
  it('defaults to all history up to now in 15 s steps, job hermes-sidecar and instance backfill', () => {
    expect(parseBackfillArgs([], now)).toMatchObject({ fromMs: undefined, untilMs: now, stepMs: 15_000, outDir: 'hermes-backfill', extraLabels: [['job', 'hermes-sidecar'], ['instance', 'backfill']] });
  });

  it('reads RFC 3339 and Unix seconds, repeated --state-db and --label', () => {
    const args = parseBackfillArgs(['--from=2026-07-01T00:00:00Z', '--until', '1790000000', '--state-db', 'a', '--state-db', 'b', '--label', 'job=h', '--label', 'cluster=eu1'], now);
    expect(args).toMatchObject({ fromMs: Date.UTC(2026, 6, 1), untilMs: 1_790_000_000_000, stateDbs: ['a', 'b'], extraLabels: [['job', 'h'], ['instance', 'backfill'], ['cluster', 'eu1']] });
  });

  it.each([
    [['--from', 'yesterday'], '--from must be an RFC 3339 time'],
    [['--from', '1790000000', '--until', '1780000000'], '--from must be before --until.'],
    [['--step', '0'], '--step must be a whole number of seconds'],
    [['--label', 'source=x'], '--label must be NAME=VALUE'],
    [['--label', 'job=a', '--label', 'job=b'], '--label job is given more than once.'],
    [['--out', 'a', '--out', 'b'], '--out is given more than once.'],
    [['--until'], '--until needs a value.'],
    [['stray'], 'an argument is not an option.'],
    [['--until', '9000000000000'], '--until must be an RFC 3339 time (2026-07-01T00:00:00Z) or Unix seconds, from 1970 to 9999.'],
    [['--from', '2026-13-01T00:00:00Z'], '--from must be an RFC 3339 time'],
    [['--max-memory', '63Mi'], '--max-memory must be a size of at least 64 MiB'],
    [['--max-memory', '1Zi'], '--max-memory must be a size of at least 64 MiB'],
  ])('refuses %j with one sentence', (argv, message) => {
    expect(() => parseBackfillArgs(argv, now)).toThrow(BackfillError);
    expect(() => parseBackfillArgs(argv, now)).toThrow(message);
  });
});

describe('times and sizes', () => {
  const now = Date.UTC(2026, 8, 30);
  it('accepts the epoch and the last second of 9999, in either spelling', () => {
    expect(parseBackfillArgs(['--from', '0', '--until', '253402300799'], now)).toMatchObject({ fromMs: 0, untilMs: MAX_TIME_MS });
    expect(parseBackfillArgs(['--until', '9999-12-31T23:59:59Z'], now).untilMs).toBe(MAX_TIME_MS);
  });

  it('reads --max-memory in the usual spellings, 512 MiB by default', () => {
    expect(parseBackfillArgs([], now).maxMemoryBytes).toBe(DEFAULT_MAX_MEMORY_BYTES);
    expect(DEFAULT_MAX_MEMORY_BYTES).toBe(512 * 1024 ** 2);
    expect(parseBackfillArgs(['--max-memory', '1Gi'], now).maxMemoryBytes).toBe(1024 ** 3);
    expect(parseByteSize('192Mi')).toBe(192 * 1024 ** 2);
    expect(parseByteSize('192MiB')).toBe(192 * 1024 ** 2);
    expect(parseByteSize('256MB')).toBe(256_000_000);
    expect(parseByteSize('1.5G')).toBe(1_500_000_000);
    expect(parseByteSize('1048576')).toBe(1_048_576);
    for (const bad of ['', 'Mi', '-1Mi', '12 parsecs', 'constructor', '1e9']) expect(parseByteSize(bad), bad).toBeUndefined();
  });
});
