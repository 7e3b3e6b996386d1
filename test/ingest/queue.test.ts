/**
 * The ingest queue holds batches: decoded batches wait, bounded in batches
 * and in events, one worker applies them in order in slices, a full queue answers 429 +
 * Retry-After, and a 202 still means applied. Real HTTP, concurrent senders.
 */
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { nextTurn } from '../../src/slices.js';
import { series } from '../support/exposition.js';
import { listenOnFreePort, rawPost } from '../support/http.js';
import { startTestSidecar } from '../support/sidecar.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

const lines = (count: number, offset = 0) =>
  Buffer.from(
    Array.from({ length: count }, (_, index) =>
      JSON.stringify({ event: 'post_tool_call', tool_name: 'terminal', status: 'ok', tool_call_id: `c${offset + index}`, duration_ms: 3 }),
    ).join('\n'),
  );
const NDJSON = { 'Content-Type': 'application/x-ndjson' };

describe('a full queue', () => {
  it('50 concurrent 2,000-line posts on a queue of 2 batches: the excess gets 429 + Retry-After, the rest is applied exactly', async () => {
    const harness = startTestSidecar({ 'ingest.queue-capacity': '2', 'ingest.retry-after-seconds': '4' });
    const server = await listenOnFreePort(harness.sidecar.ingestApp);
    servers.push(server);
    let deepest = 0;
    const watcher = setInterval(() => (deepest = Math.max(deepest, harness.sidecar.queue.depth)), 1);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, post) => rawPost(server, '/v1/events', lines(2000, post * 2000), NDJSON)));
    clearInterval(watcher);
    const accepted = answers.filter((answer) => answer.status === 202);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(accepted.length + refused.length).toBe(50);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]?.headers['retry-after']).toBe('4');
    expect(deepest).toBe(2);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(accepted.length * 2000);
    expect(samples.get(series('hermes_sidecar_events_dropped_total', { reason: 'queue_full' }))).toBe(refused.length * 2000);
    expect(samples.get(series('hermes_sidecar_ingest_requests_total', { route: '/v1/events', code: '429' }))).toBe(refused.length);
    expect(samples.get('hermes_sidecar_queue_depth')).toBe(0);
  });

  it('is bounded in events too: a second large batch waits for room, a small one fits', async () => {
    const harness = startTestSidecar({ 'ingest.queue-max-events': '3000' });
    harness.sidecar.queue.pause();
    const first = harness.postNdjson(Array.from({ length: 2000 }, () => ({ event: 'post_tool_call', tool_name: 't', status: 'ok' })));
    const firstDone = first.then((answer) => answer.status);
    await until(() => harness.sidecar.queue.events === 2000);
    const second = await harness.postNdjson(Array.from({ length: 2000 }, () => ({ event: 'post_tool_call', tool_name: 't', status: 'ok' })));
    expect(second.status).toBe(429);
    const small = harness.postNdjson(Array.from({ length: 1000 }, () => ({ event: 'post_tool_call', tool_name: 't', status: 'ok' }))).then((answer) => answer.status);
    await until(() => harness.sidecar.queue.events === 3000);
    const gauges = await harness.web.get('/metrics');
    expect(gauges.text).toContain('hermes_sidecar_queue_events 3000\n');
    expect(gauges.text).toContain('hermes_sidecar_queue_events_capacity 3000\n');
    harness.sidecar.queue.resume();
    expect(await firstDone).toBe(202);
    expect(await small).toBe(202);
  });

  it('202 means applied: when the answer arrives, its events are counted', async () => {
    const harness = startTestSidecar();
    const server = await listenOnFreePort(harness.sidecar.ingestApp);
    servers.push(server);
    const applied: number[] = [];
    await Promise.all(
      Array.from({ length: 5 }, async (_, post) => {
        const answer = await rawPost(server, '/v1/events', lines(3000, post * 3000), NDJSON);
        expect(answer.status).toBe(202);
        applied.push(harness.sidecar.dispatcher.applied);
      }),
    );
    // The n-th answer to arrive saw at least n batches of 3,000 events applied.
    applied.sort((a, b) => a - b);
    applied.forEach((seen, index) => expect(seen).toBeGreaterThanOrEqual((index + 1) * 3000));
    expect(applied.at(-1)).toBe(15_000);
  });
});

describe('work in slices', () => {
  it('a scrape is answered while a large body is decoded and applied', async () => {
    let scrapedDuringWork: number | undefined;
    let scraping: Promise<void> | undefined;
    const harness = startTestSidecar(
      {},
      {
        slicer: {
          sliceMs: 1,
          now: () => performance.now(),
          pause: async () => {
            // On the first pause, a scrape over HTTP must complete before the body's work goes on.
            scraping ??= harness.web.get('/metrics').then((answer) => void (scrapedDuringWork = answer.status));
            await nextTurn();
          },
        },
      },
    );
    const server = await listenOnFreePort(harness.sidecar.ingestApp);
    servers.push(server);
    const posting = rawPost(server, '/v1/events', lines(10_000), NDJSON);
    const answer = await posting;
    expect(answer.status).toBe(202);
    await scraping;
    expect(scrapedDuringWork).toBe(200);
    expect(harness.sidecar.dispatcher.applied).toBe(10_000);
  });
});

/** Waits for `condition`, checking every 5 ms; the deadline is generous so a loaded machine only makes it slower. */
async function until(condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 20_000; !condition(); ) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
