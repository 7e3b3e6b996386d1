import { describe, expect, it } from 'vitest';
import { errorFields } from '../src/app.js';

describe('errorFields (how the sidecar logs its own failures)', () => {
  it('keeps the name, the message and the stack frames of an error', () => {
    const fields = errorFields(new RangeError('bucket index out of range'));
    expect(fields.error.name).toBe('RangeError');
    expect(fields.error.message).toBe('bucket index out of range');
    const stack = fields.error.stack as string[];
    expect(stack.length).toBeGreaterThan(0);
    expect(stack.every((frame) => frame.startsWith('at '))).toBe(true);
    expect(stack[0]).toContain('app.test.ts');
  });

  it('leaves out the message of a SyntaxError, which quotes the text being parsed', () => {
    let thrown: unknown;
    try {
      JSON.parse('{"prompt": "SECRET-SENTINEL');
    } catch (error) {
      thrown = error;
    }
    const fields = errorFields(thrown);
    expect(fields.error.name).toBe('SyntaxError');
    expect(JSON.stringify(fields)).not.toContain('SECRET-SENTINEL');
    expect(fields.error).not.toHaveProperty('message');
  });

  it('names the type of a thrown non-error without its value', () => {
    expect(errorFields('SECRET-SENTINEL')).toEqual({ error: { name: 'string' } });
  });
});
