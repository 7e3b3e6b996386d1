import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../src/suggest.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['labels', 'labels', 0],
    ['quee_capacity', 'queue_capacity', 1],
    ['lables', 'labels', 1],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
    ['foo', 'log', 2],
  ])('%s → %s is %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('closest', () => {
  const keys = ['web', 'ingest', 'webhook', 'correlator', 'sequence', 'metrics', 'memory', 'log', 'labels', 'buckets'];

  it('offers the key meant for a typo', () => {
    expect(closest('lables', keys)).toBe('labels');
    expect(closest('ingets', keys)).toBe('ingest');
    expect(closest('Buckets', keys)).toBe('buckets');
    expect(closest('queue-capacty', ['queue_capacity', 'retry_after_seconds'])).toBe('queue_capacity');
  });

  it('offers nothing for a name that is not close to any', () => {
    expect(closest('foo', keys)).toBeUndefined();
    expect(closest('prometheus', keys)).toBeUndefined();
    expect(closest('', keys)).toBeUndefined();
  });

  it('prefers the nearest of several close names', () => {
    expect(closest('webhok', keys)).toBe('webhook');
    expect(closest('wep', keys)).toBe('web');
  });
});
