/**
 * Decoding in slices: the same result as decoding in one go, a pause at
 * least every LINES_PER_STEP lines (blank ones included), and bounded work per line.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBody, decodeBodyInSlices, LINES_PER_STEP, type DecodeOptions } from '../../src/contract/decode.js';
import { SidecarError } from '../../src/errors.js';

const options: DecodeOptions = { format: 'ndjson', maxEvents: 10_000, arrivedAt: 1_800_000_000 };

/** Pauses at every opportunity and counts them. */
function everyStep() {
  let pauses = 0;
  return { slicer: { sliceMs: 0, now: () => 0, pause: async () => void (pauses += 1) }, pauses: () => pauses };
}

const outcome = async (run: () => unknown) => {
  try {
    return { value: await run() };
  } catch (error) {
    return { error: (error as SidecarError).code };
  }
};

describe('decodeBodyInSlices', () => {
  it('property: gives exactly what decodeBody gives, for any lines (valid, invalid, blank, over-long)', async () => {
    const line = fc.oneof(
      fc.constant(''),
      fc.constant('   '),
      fc.constant('{not json'),
      fc.constant(JSON.stringify({ event: 'post_tool_call', tool_name: 'terminal', status: 'ok' })),
      fc.json(),
      fc.string({ minLength: 0, maxLength: 300 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 300 }), fc.constantFrom('ndjson', 'json'), async (lines, format) => {
        const body = Buffer.from(format === 'ndjson' ? lines.join('\n') : `[${lines.filter((text) => text.trim() !== '').join(',')}]`);
        const settings = { ...options, format, maxLineBytes: 200 } as const;
        const sliced = await outcome(() => decodeBodyInSlices(body, settings, everyStep().slicer));
        expect(sliced).toEqual(await outcome(() => decodeBody(body, settings)));
      }),
      { numRuns: 200 },
    );
  });

  it('hands the event loop back every LINES_PER_STEP lines, blank lines included', async () => {
    const lines = 10_000;
    const counted = everyStep();
    const decoded = await decodeBodyInSlices(Buffer.from(Array.from({ length: lines }, () => '{}').join('\n')), options, counted.slicer);
    expect(decoded.lines).toBe(lines);
    expect(counted.pauses()).toBe(Math.floor(lines / LINES_PER_STEP));

    const blank = everyStep();
    const onlyNewlines = Buffer.alloc(1_000_000, 0x0a);
    await expect(decodeBodyInSlices(onlyNewlines, options, blank.slicer)).rejects.toMatchObject({ code: 'empty_body' });
    expect(blank.pauses()).toBe(Math.floor(1_000_001 / LINES_PER_STEP));
  });

  it('stops at the first line past maxEvents instead of scanning the rest', async () => {
    const counted = everyStep();
    const body = Buffer.from(Array.from({ length: 100_000 }, () => '{}').join('\n'));
    await expect(decodeBodyInSlices(body, { ...options, maxEvents: 1000 }, counted.slicer)).rejects.toMatchObject({ code: 'too_many_events' });
    expect(counted.pauses()).toBe(Math.floor(1000 / LINES_PER_STEP));
  });
});

describe('per-line and per-document limits', () => {
  it('refuses a line longer than maxLineBytes unread (line_too_large); the other lines count', () => {
    const good = JSON.stringify({ event: 'post_tool_call', tool_name: 'terminal', status: 'ok' });
    const long = JSON.stringify({ event: 'post_tool_call', tool_name: 'x'.repeat(2000) });
    const decoded = decodeBody(Buffer.from([good, long, good].join('\n')), { ...options, maxLineBytes: 1024 });
    expect(decoded.events).toHaveLength(2);
    expect(decoded.errors).toEqual([{ index: 1, reason: 'line_too_large' }]);
    expect(decoded.lines).toBe(3);
  });

  it('refuses a JSON body larger than maxJsonBytes before parsing it (413)', () => {
    const body = Buffer.from(`[${Array.from({ length: 2000 }, () => '{}').join(',')}]`);
    expect(() => decodeBody(body, { ...options, format: 'json', maxJsonBytes: 1024 })).toThrow(SidecarError);
    expect(() => decodeBody(body, { ...options, format: 'json', maxJsonBytes: 1024 })).toThrow(/over the size limit/);
  });
});
