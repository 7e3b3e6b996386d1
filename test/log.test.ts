import { describe, expect, it } from 'vitest';
import { createLogger, toLogfmt } from '../src/log.js';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function capture(level: string, format: 'json' | 'logfmt') {
  const lines: string[] = [];
  const logger = createLogger(level, format, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

describe('json lines', () => {
  it('carry the level name, an ISO-8601 time and the service', () => {
    const { logger, lines } = capture('info', 'json');
    logger.info({ web: '127.0.0.1:9478' }, 'listening');
    // Written in the call itself: pino stays synchronous.
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(record).toEqual({ level: 'info', time: expect.stringMatching(ISO_TIME), service: 'hermes-prometheus-sidecar', web: '127.0.0.1:9478', msg: 'listening' });
  });

  it('leave out what is below the level', () => {
    const { logger, lines } = capture('info', 'json');
    logger.debug({ code: 'queue_full' }, 'request refused');
    logger.warn('careful');
    expect(lines.map((line) => (JSON.parse(line) as { level: string }).level)).toEqual(['warn']);
  });
});

describe('logfmt lines', () => {
  it('lead with time, level and msg, quote what needs it and flatten nested fields', () => {
    const { logger, lines } = capture('debug', 'logfmt');
    logger.debug({ code: 'lines_rejected', route: '/v1/events', lines: 3, rejected: { invalid_json: 1, invalid_event: 2 }, ok: false }, 'request had rejected lines');
    expect(lines).toHaveLength(1);
    const [time, ...rest] = (lines[0] ?? '').split(' ');
    expect(time).toMatch(/^time=\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(rest.join(' ')).toBe(
      'level=debug msg="request had rejected lines" service=hermes-prometheus-sidecar code=lines_rejected route=/v1/events lines=3 rejected.invalid_json=1 rejected.invalid_event=2 ok=false\n',
    );
  });

  it.each([
    ['plain', 'v=plain'],
    ['two words', 'v="two words"'],
    ['say "hi"', 'v="say \\"hi\\""'],
    ['a=b', 'v="a=b"'],
    ['line\nbreak', 'v="line\\nbreak"'],
    ['', 'v=""'],
    [null, 'v=null'],
    [1.5, 'v=1.5'],
    [['a', 1], 'v="[\\"a\\",1]"'],
  ])('writes %j as %s, on one line', (value, expected) => {
    expect(toLogfmt(JSON.stringify({ v: value }))).toBe(`${expected}\n`);
  });

  it('turns every character a key cannot hold into _', () => {
    expect(toLogfmt('{"a b=c":1,"d\\"e":2}')).toBe('a_b_c=1 d_e=2\n');
  });
});
