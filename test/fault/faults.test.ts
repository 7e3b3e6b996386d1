/**
 * Fault injection with real processes: Hermes (the real plugin in Python) starting before the
 * sidecar, a sidecar that stops answering (SIGSTOP) while the agent keeps calling hooks, and
 * Prometheus-style scrapes during heavy ingest. The longer variants are scripts under bench/.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sendTraffic, TrafficModel } from '../../tools/traffic.js';
import { appliedEvents, scrapeSamples } from '../support/accounting.js';
import { HeldPlugin, totalDropped } from '../support/driver.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { retryOnAddressInUse } from '../support/ports.js';
import { python3 } from '../support/tools.js';

const python = python3();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const waitFor = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 20_000, interval: 50 });
const pluginEnv = { HERMES_SIDECAR_HEARTBEAT_INTERVAL: '0.5', HERMES_SIDECAR_TIMEOUT: '0.5' };

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of cleanup.splice(0).reverse()) await stop().catch(() => undefined);
});

async function sidecarOn(args: string[] = []): Promise<SidecarProcess> {
  const sidecar = await startSidecarProcess(args);
  cleanup.push(() => sidecar.stop('SIGKILL'));
  return sidecar;
}

/**
 * A loopback port held by a listener that resets every connection, as a port where the sidecar
 * is not up yet looks to a client; `release` frees it for the sidecar that takes it over.
 */
async function refusingPort(): Promise<{ port: number; attempts: () => number; release: () => Promise<void> }> {
  let attempts = 0;
  const server: Server = createServer((socket) => {
    attempts += 1;
    socket.resetAndDestroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    attempts: () => attempts,
    release: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The sidecar's accounting counters, printed when an exact count is off (which rule let it through). */
function accountingOf(samples: ReadonlyMap<string, number>): string {
  const wanted = ['events_received', 'events_duplicate', 'events_discarded', 'events_lost', 'events_dropped', 'sequence_resets', 'events_late', 'heartbeats_stale'];
  const lines = [...samples].filter(([key]) => wanted.some((name) => key.startsWith(`hermes_sidecar_${name}`)) && !key.includes('plugin_heartbeat'));
  return `accounting: ${lines.map(([key, value]) => `${key} ${value}`).join('; ')}`;
}

async function held(url: string, env: NodeJS.ProcessEnv = {}): Promise<HeldPlugin> {
  const plugin = await HeldPlugin.start(python.path ?? 'python3', url, { ...pluginEnv, ...env });
  cleanup.push(() => plugin.stop());
  return plugin;
}

describe.skipIf(python.path === undefined)(`faults with the real plugin${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  it('Hermes starting before the sidecar: the buffered events arrive once the sidecar is up', async () => {
    const ingest = await refusingPort();
    cleanup.push(ingest.release);
    const plugin = await held(`http://127.0.0.1:${ingest.port}/v1/events`);
    const emitted = await plugin.command('events 500 0');
    expect(emitted.emitted).toBe(500);
    // The plugin has tried and failed at least once before the sidecar is there.
    await waitFor(async () => expect((await plugin.stats()).retries).toBeGreaterThan(0));
    expect(ingest.attempts()).toBeGreaterThan(0);
    const before = await plugin.stats();
    expect(before.events_delivered).toBe(0);
    await ingest.release();
    // The port was this test's until now; a bind that races another process's is tried again.
    const sidecar = await retryOnAddressInUse(() => sidecarOn([`--ingest.listen-address=127.0.0.1:${ingest.port}`]));
    const after = await plugin.flushAll();
    expect(after.events_delivered).toBe(500);
    expect(totalDropped(after.dropped)).toBe(0);
    const samples = await scrapeSamples(sidecar);
    expect(appliedEvents(samples)).toBe(500);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
  });

  it('a sidecar that stops answering: hooks stay fast, and after it resumes every event counts once', async () => {
    const sidecar = await sidecarOn();
    const plugin = await held(`${sidecar.ingest}/v1/events`);
    await plugin.command('events 100 0');
    await plugin.flushAll();
    sidecar.child.kill('SIGSTOP');
    cleanup.push(async () => sidecar.child.kill('SIGCONT'));
    // While the sidecar hangs, the agent thread's hook calls must not wait on the network.
    const started = performance.now();
    const burst = await plugin.command('events 2000 0');
    const burstSeconds = (performance.now() - started) / 1000;
    expect(burst.emitted).toBe(2000);
    // A hook call that waited on the hung sidecar would wait out the 0.5 s send timeout, so 2000
    // of them would take minutes; the bound leaves a loaded machine room and still fails that.
    expect(burstSeconds).toBeLessThan(10);
    // Several timed-out attempts pile up in the stopped process's socket.
    await waitFor(async () => expect((await plugin.stats()).retries).toBeGreaterThanOrEqual(2));
    sidecar.child.kill('SIGCONT');
    const final = await plugin.flushAll();
    expect(final.events_numbered).toBe(2100);
    expect(final.events_delivered).toBe(2100);
    expect(totalDropped(final.dropped)).toBe(0);
    const samples = await scrapeSamples(sidecar);
    // Requests the plugin gave up on were still read after SIGCONT: duplicates, counted once.
    expect(appliedEvents(samples), accountingOf(samples)).toBe(2100);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
  });
});

describe('scrapes during heavy ingest', () => {
  it('every scrape succeeds with a complete, parseable exposition', async () => {
    const sidecar = await sidecarOn();
    const traffic = new AbortController();
    let accepted = 0;
    const senders = [1, 2].map((seed) =>
      sendTraffic({
        url: `${sidecar.ingest}/v1/events`,
        model: new TrafficModel({ seed, agents: 8, faults: true }),
        rate: 20_000,
        batchSize: 500,
        signal: traffic.signal,
        onResponse: (status, lines) => {
          if (status === 202) accepted += lines.length;
        },
      }),
    );
    const times: number[] = [];
    try {
      for (let scrape = 0; scrape < 20; scrape += 1) {
        const started = performance.now();
        const response = await fetch(`${sidecar.web}/metrics`);
        const text = await response.text();
        times.push(performance.now() - started);
        expect(response.status).toBe(200);
        expect(text.endsWith('\n')).toBe(true);
        expect(text).toMatch(/^hermes_sidecar_build_info\{/m);
        expect(text).not.toMatch(/ NaN$/m);
        await sleep(50);
      }
    } finally {
      traffic.abort();
      await Promise.all(senders);
    }
    expect(accepted).toBeGreaterThan(10_000);
    console.log(`scrapes under ingest: ${times.length}, max ${Math.max(...times).toFixed(1)} ms, events accepted meanwhile ${accepted}`);
  });
});
