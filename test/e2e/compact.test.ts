/**
 * The compact body between the real bridge plugin (a real Python process) and the real sidecar
 * binary: the plugin switches to it once the sidecar advertises it, sends NDJSON when told to,
 * and when a sidecar that advertised it is replaced by one that refuses it (415), re-sends the
 * batch as NDJSON at once, loses nothing and counts the refusal (plugin error compact_refused).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { COMPACT_MEDIA_TYPE } from '../../src/contract/compact.js';
import { appliedEvents, droppedTotal, scrapeSamples } from '../support/accounting.js';
import { HeldPlugin } from '../support/driver.js';
import { startSidecarProcess } from '../support/process.js';
import { python3 } from '../support/tools.js';

const python = python3();
const pluginEnv = { HERMES_SIDECAR_HEARTBEAT_INTERVAL: '0.5', HERMES_SIDECAR_TIMEOUT: '2' };

interface Stats {
  readonly events_delivered: number;
  readonly body_format: string;
  readonly errors: Record<string, number>;
  readonly dropped: Record<string, Record<string, number>>;
}

const running: { stop(signal?: NodeJS.Signals): Promise<unknown> }[] = [];
const servers: Server[] = [];
afterEach(async () => {
  // The plugin first: it must not post through a proxy to a sidecar already gone.
  for (const process of running.splice(0).reverse()) await process.stop('SIGKILL').catch(() => undefined);
  for (const server of servers.splice(0)) server.close();
});

/**
 * A reverse proxy to a sidecar that can play an older sidecar: once `older` is set it answers a
 * compact body 415 (as a sidecar without the compact decoder does, before reading it) and drops
 * Accept-Post from the answers it forwards.
 */
async function downgradingProxy(target: string) {
  const state = { older: false, compactForwarded: 0, compactRefused: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const compact = (request.headers['content-type'] ?? '').startsWith(COMPACT_MEDIA_TYPE);
      if (compact && state.older) {
        state.compactRefused += 1;
        response.writeHead(415, { 'content-type': 'application/json' }).end('{"error":"unsupported_media_type"}');
        return;
      }
      if (compact) state.compactForwarded += 1;
      const headers = { 'content-type': request.headers['content-type'] ?? '' };
      fetch(`${target}${request.url ?? '/'}`, { method: 'POST', headers, body: Buffer.concat(chunks) })
        .then(async (answer) => {
          const advertised = answer.headers.get('accept-post');
          const forwarded: Record<string, string> = { 'content-type': 'application/json' };
          if (advertised !== null && !state.older) forwarded['accept-post'] = advertised;
          response.writeHead(answer.status, forwarded).end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => response.writeHead(502).end());
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/events` };
}

async function startPlugin(url: string, env: NodeJS.ProcessEnv = {}): Promise<HeldPlugin> {
  const plugin = await HeldPlugin.start(python.path ?? 'python3', url, { ...pluginEnv, ...env });
  running.push({ stop: () => plugin.stop() });
  return plugin;
}

/** Emits `count` events and flushes until the plugin holds none. */
async function sendAndDrain(plugin: HeldPlugin, count: number): Promise<Stats> {
  const ack = await plugin.command(`events ${count} 0`);
  expect(ack.emitted).toBe(count);
  return (await plugin.flushAll()) as unknown as Stats;
}

describe.skipIf(python.path === undefined)(`compact body, real plugin and sidecar${python.skipReason ? ` (${python.skipReason})` : ''}`, () => {
  it('a new plugin and a new sidecar switch to compact bodies after the first answer; HERMES_SIDECAR_COMPACT=0 stays NDJSON; both deliver everything', async () => {
    for (const [env, format] of [[{}, 'compact'], [{ HERMES_SIDECAR_COMPACT: '0' }, 'ndjson']] as const) {
      const sidecar = await startSidecarProcess();
      running.push(sidecar);
      const plugin = await startPlugin(`${sidecar.ingest}/v1/events`, env);
      await sendAndDrain(plugin, 300);
      const stats = await sendAndDrain(plugin, 500);
      expect(stats.body_format).toBe(format);
      expect(stats.events_delivered).toBe(800);
      // (cost_unavailable is there too: the driver runs without Hermes' pricing module.)
      expect(stats.errors.compact_refused).toBeUndefined();
      const samples = await scrapeSamples(sidecar);
      expect(appliedEvents(samples)).toBe(800);
      expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
      expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(0);
      expect(droppedTotal(samples)).toBe(0);
    }
  });

  it('a sidecar that refuses compact bodies after advertising them gets the batch as NDJSON: nothing lost, the refusal counted once', async () => {
    const sidecar = await startSidecarProcess();
    running.push(sidecar);
    const proxy = await downgradingProxy(sidecar.ingest);
    const plugin = await startPlugin(proxy.url);
    await sendAndDrain(plugin, 300);
    const before = await sendAndDrain(plugin, 300);
    expect(before.body_format).toBe('compact');
    expect(proxy.state.compactForwarded).toBeGreaterThan(0);

    proxy.state.older = true;
    const after = await sendAndDrain(plugin, 400);
    expect(proxy.state.compactRefused).toBe(1);
    expect(after.body_format).toBe('ndjson');
    expect(after.errors.compact_refused).toBe(1);
    expect(after.dropped).toEqual({});
    // The older sidecar does not advertise compact bodies: the plugin stays with NDJSON.
    const later = await sendAndDrain(plugin, 200);
    expect(proxy.state.compactRefused).toBe(1);
    expect(later.events_delivered).toBe(1200);

    const samples = await scrapeSamples(sidecar);
    expect(appliedEvents(samples)).toBe(1200);
    expect(samples.get('hermes_sidecar_events_lost_total')).toBe(0);
    expect(samples.get('hermes_sidecar_events_duplicate_total')).toBe(0);
  });
});
