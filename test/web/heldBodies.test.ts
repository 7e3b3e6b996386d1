/** The bound on unread scrape answers (src/web/heldBodies.ts), with stand-in responses. */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { HeldBodies } from '../../src/web/heldBodies.js';

/** A response that records whether it was destroyed, and finishes on demand. */
function fakeResponse() {
  const response = Object.assign(new EventEmitter(), { destroyed: false, destroy: () => ((response.destroyed = true), response.emit('close')) });
  return response as typeof response & ServerResponse;
}

describe('HeldBodies', () => {
  const body = (bytes: number) => ({ chunks: [Buffer.alloc(bytes)], bytes });

  it('counts a shared body once, and releases it when its last response is done', () => {
    const held = new HeldBodies(100, () => undefined);
    const shared = body(60);
    const [a, b] = [fakeResponse(), fakeResponse()];
    held.hold(shared, a);
    held.hold(shared, b);
    expect(held.heldBytes).toBe(60);
    a.emit('finish');
    expect(held.heldBytes).toBe(60);
    b.emit('finish');
    expect(held.heldBytes).toBe(0);
  });

  it('drops the answers holding the oldest body when a new one would pass the bound, and counts them', () => {
    const dropped: number[] = [];
    const held = new HeldBodies(100, (count) => dropped.push(count));
    const oldest = [fakeResponse(), fakeResponse()];
    for (const response of oldest) held.hold(body(60), response);
    // Two distinct bodies of 60: the first one's holder made room for the second.
    expect(dropped).toEqual([1]);
    expect(oldest.map((response) => response.destroyed)).toEqual([true, false]);
    expect(held.heldBytes).toBe(60);
    const reader = fakeResponse();
    held.hold(body(30), reader);
    expect(held.heldBytes).toBe(90);
    expect(reader.destroyed).toBe(false);
  });

  it('always allows one body, however large', () => {
    const held = new HeldBodies(10, () => undefined);
    const response = fakeResponse();
    held.hold(body(50), response);
    expect(response.destroyed).toBe(false);
    expect(held.heldBytes).toBe(50);
  });
});
