/**
 * Overload end to end: the real sidecar binary with a queue of one batch,
 * kept full by a flood of large posts, and the real bridge plugin in a real Python process
 * sending through it. The plugin is answered 429 + Retry-After, retries, and in the end every
 * event it numbered is counted exactly once: none lost, none twice.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { appliedEvents, droppedTotal, scrapeSamples } from '../support/accounting.js';
import { series } from '../support/exposition.js';
import { HeldPlugin, totalDropped } from '../support/driver.js';
import { startSidecarProcess } from '../support/process.js';
import { python3 } from '../support/tools.js';

const python = python3();
const running: { stop(signal?: NodeJS.Signals): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const process of running.splice(0)) await process.stop('SIGKILL').catch(() => undefined);
});

const FLOOD_LINES = 4000;
const floodBody = Array.from({ length: FLOOD_LINES }, (_, index) =>
  JSON.stringify({ event: 'post_tool_call', tool_name: 'flood', status: 'ok', tool_call_id: `f${index}`, duration_ms: 1 }),
).join('\n');

describe.skipIf(python.path === undefined)(`overload: 429, retry, exactly once${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  it('the plugin retries every 429 and each of its events is applied exactly once', async () => {
    const sidecar = await startSidecarProcess(['--ingest.queue-capacity=1', '--ingest.retry-after-seconds=1']);
    running.push(sidecar);
    const plugin = await HeldPlugin.start(python.path ?? 'python3', `${sidecar.ingest}/v1/events`, {
      HERMES_SIDECAR_HEARTBEAT_INTERVAL: '0.5',
      HERMES_SIDECAR_TIMEOUT: '5',
    });
    running.push({ stop: () => plugin.stop() });

    // Four senders keep the one-batch queue busy until the plugin has delivered everything.
    let flooding = true;
    const flood = { accepted: 0, refused: 0 };
    const floodLoop = async () => {
      while (flooding) {
        const answer = await fetch(`${sidecar.ingest}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/x-ndjson' }, body: floodBody });
        await answer.arrayBuffer();
        if (answer.status === 202) flood.accepted += 1;
        else if (answer.status === 429) flood.refused += 1;
        else throw new Error(`flood answered ${answer.status}`);
      }
    };
    const floods = Array.from({ length: 4 }, floodLoop);
    // The queue is full once the flood has been both applied and refused.
    await vi.waitFor(() => expect(flood.accepted > 0 && flood.refused > 0).toBe(true), { timeout: 30_000, interval: 20 });
    const emitted = await plugin.command('events 2000 0');
    expect(emitted.emitted).toBe(2000);
    // The flood goes on until the plugin has been refused at least once and has delivered
    // everything: conditions, not a duration, so a slow machine changes only how long it takes.
    let stats = await plugin.stats();
    for (const deadline = Date.now() + 90_000; stats.events_delivered < 2000 || stats.buffer_depth > 0 || stats.retries === 0; ) {
      if (Date.now() > deadline) throw new Error(`the plugin did not deliver through the overload: ${JSON.stringify(stats)}`);
      stats = (await plugin.command('flush')).stats as typeof stats;
    }
    flooding = false;
    await Promise.all(floods);
    const final = await plugin.flushAll();

    expect(final.events_numbered).toBe(2000);
    expect(final.events_delivered).toBe(2000);
    expect(totalDropped(final.dropped)).toBe(0);
    const samples = await scrapeSamples(sidecar);
    const refusedTotal = samples.get(series('hermes_sidecar_ingest_requests_total', { route: '/v1/events', code: '429' })) ?? 0;
    // The plugin itself was refused (beyond the flood's own refusals) and retried.
    expect(refusedTotal - flood.refused).toBeGreaterThan(0);
    expect(flood.accepted).toBeGreaterThan(0);
    const floodApplied = samples.get(series('hermes_tool_calls_total', { tool: 'flood', status: 'ok' })) ?? 0;
    expect(floodApplied).toBe(flood.accepted * FLOOD_LINES);
    // Every plugin event exactly once: received minus duplicates, the flood aside.
    expect(appliedEvents(samples) - floodApplied).toBe(2000);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
    expect(droppedTotal(samples)).toBe(0);
  }, 120_000);
});
