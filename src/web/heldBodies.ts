/** The bytes of scrape answers handed to sockets and not yet read by their peers, bounded. */
import type { ServerResponse } from 'node:http';
import type { RenderedBody } from './parts.js';

/** Bytes of answers sent but not yet read that the web listener holds, by default. */
export const DEFAULT_MAX_HELD_BYTES = 32 * 1024 * 1024;

/**
 * The bytes of answers handed to sockets whose peers have not read them yet, bounded.
 *
 * Shared renders make scrapers that arrive together cost one exposition, but scrapers that
 * arrive one after another and never read each hold a render of their own until the write
 * timeout. Past the bound, the answers holding the oldest render are dropped: their peers have
 * not read what was rendered before everyone else's, so they are the ones stalling. One render is
 * always allowed, however large.
 */
export class HeldBodies {
  /** Body → the responses still sending it; insertion order is render order. */
  private readonly holders = new Map<RenderedBody, Set<ServerResponse>>();
  private held = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly dropped: (count: number) => void,
  ) {}

  get heldBytes(): number {
    return this.held;
  }

  /** Records that `response` is about to send `body`, dropping the oldest unread answers first if needed. */
  hold(body: RenderedBody, response: ServerResponse): void {
    let holders = this.holders.get(body);
    if (holders === undefined) {
      this.makeRoom(body.bytes);
      holders = new Set();
      this.holders.set(body, holders);
      this.held += body.bytes;
    }
    holders.add(response);
    const release = () => {
      response.off('finish', release);
      response.off('close', release);
      this.release(body, response);
    };
    response.on('finish', release);
    response.on('close', release);
  }

  private release(body: RenderedBody, response: ServerResponse): void {
    const holders = this.holders.get(body);
    if (holders === undefined || !holders.delete(response) || holders.size > 0) return;
    this.holders.delete(body);
    this.held -= body.bytes;
  }

  private makeRoom(bytes: number): void {
    for (const [body, holders] of this.holders) {
      if (this.held + bytes <= this.maxBytes) return;
      const stalled = [...holders];
      this.holders.delete(body);
      this.held -= body.bytes;
      for (const response of stalled) response.destroy();
      this.dropped(stalled.length);
    }
  }
}
