/** Exemplar label sets: ids in priority order, within OpenMetrics' 128 characters, never repaired. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exemplarOf, MAX_EXEMPLAR_CHARACTERS } from '../../src/metrics/exemplars.js';

describe('exemplarOf', () => {
  it('carries the ids that are present, in order, with the value and time', () => {
    expect(exemplarOf([['api_request_id', 'T1:api:1'], ['turn_id', undefined], ['session_id', 'S1']], 0.5, 1800000000.25)).toEqual({
      labels: { api_request_id: 'T1:api:1', session_id: 'S1' },
      value: 0.5,
      timestamp: 1800000000.25,
    });
  });

  it('is undefined without any id', () => {
    expect(exemplarOf([['turn_id', undefined]], 1, 1)).toBeUndefined();
  });

  it('leaves out whole ids that would pass 128 characters, keeping later ones that fit', () => {
    const long = 'x'.repeat(MAX_EXEMPLAR_CHARACTERS - 'tool_call_id'.length - 5);
    const exemplar = exemplarOf([['tool_call_id', long], ['turn_id', 'T1234567'], ['session_id', 'S1']], 1, 1);
    // tool_call_id + its value take 123 characters; turn_id (15) does not fit, session_id (12) does not either.
    expect(exemplar?.labels).toEqual({ tool_call_id: long });
    const tooLong = exemplarOf([['tool_call_id', 'y'.repeat(200)], ['turn_id', 'T1']], 1, 1);
    expect(tooLong?.labels).toEqual({ turn_id: 'T1' });
    const total = Object.entries(exemplar?.labels ?? {}).reduce((sum, [name, value]) => sum + name.length + value.length, 0);
    expect(total).toBeLessThanOrEqual(MAX_EXEMPLAR_CHARACTERS);
  });

  it('leaves out ids with control characters or lone surrogates rather than repairing them', () => {
    expect(exemplarOf([['turn_id', 'T\n1'], ['session_id', 'S\uD800'], ['tool_call_id', 'call_1']], 1, 1)?.labels).toEqual({ tool_call_id: 'call_1' });
  });

  it('tells control characters and surrogates apart exactly as Unicode does', () => {
    const kept = (id: string) => exemplarOf([['turn_id', id]], 1, 1) !== undefined;
    // C0 and DEL and C1 (category Cc) are out; the characters around them are in.
    expect(['a\u0000', 'a\u001f', '\u007f', '\u0085', '\u009f'].map(kept)).toEqual([false, false, false, false, false]);
    expect(['a b', '~', '\u00a0', 'é'].map(kept)).toEqual([true, true, true, true]);
    // A surrogate pair (one astral character) is in; a lone high or low surrogate anywhere is out.
    expect(['T\u{1F600}1', '\uD83D\uDE00'].map(kept)).toEqual([true, true]);
    expect(['\uDE00x', 'x\uD83D', '\uD83Dx', '\uDE00\uD83D'].map(kept)).toEqual([false, false, false, false]);
  });

  it('keeps exactly the well-formed ids without a control character, whatever code units they hold', () => {
    // Printable ASCII, the characters at its edges (C0, DEL, C1), and any UTF-16 code unit, lone surrogates included.
    const unit = fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0, max: 0xa0 }), fc.integer({ min: 0, max: 0xffff }));
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 40 }), (units) => {
        const id = String.fromCharCode(...units);
        const expected = id.isWellFormed() && !/\p{Cc}/u.test(id);
        expect(exemplarOf([['turn_id', id]], 1, 1) !== undefined).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });
});
