/**
 * What long client strings cost the sidecar, over real HTTP on loopback, in process:
 *
 *  1. label-spellings: 8,064 NDJSON lines, half with a `model`, half with a `tool_name` that is a
 *     distinct 63 KiB spelling of one name (the same first 200 characters, so each sanitizes to
 *     one admitted value). Live memory (V8 heap used + Buffers, after a full GC) before and
 *     after, and what ingest and readiness answer afterwards.
 *  2. long-ids: 1,400 turns opened with distinct 32,000-character turn ids (alike but for their
 *     last digits), then the time of one more event that looks a turn up and of one scrape.
 *
 * Run: node --expose-gc --import tsx bench/strings.ts
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { createIngestServer, createSidecar } from '../src/app.js';
import { listenOn } from '../src/net/listener.js';
import { defaultConfig } from '../src/config.js';

const MiB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function liveBytes(): number {
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external + usage.arrayBuffers;
}

interface Running {
  readonly base: string;
  readonly web: string;
  close(): Promise<void>;
}

async function start(): Promise<Running> {
  const config = defaultConfig({ 'web.listen-address': '127.0.0.1:0', 'ingest.listen-address': '127.0.0.1:0' });
  const sidecar = createSidecar(config, { logger: pino({ level: 'silent' }), defaultMetrics: false });
  const servers: Server[] = [await listenOn(createIngestServer(sidecar), config.ingest.listen), await listenOn(http.createServer(sidecar.webApp), config.web.listen)];
  const [ingest, web] = servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    base: ingest ?? '',
    web: web ?? '',
    close: async () => {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}

async function post(base: string, lines: readonly string[]): Promise<number> {
  const response = await fetch(`${base}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/x-ndjson' }, body: lines.join('\n') });
  await response.arrayBuffer();
  return response.status;
}

async function labelSpellings(): Promise<void> {
  const running = await start();
  const prefix = 'acme/model-'.padEnd(200, 'x');
  const spelling = (index: number) => `${prefix}${String(index).padStart(8, '0')}`.padEnd(63 * 1024, 'y');
  const line = (index: number) =>
    JSON.stringify(index % 2 === 0 ? { event: 'post_api_request', provider: 'p', model: spelling(index) } : { event: 'post_tool_call', tool_name: spelling(index), status: 'ok' });
  const before = liveBytes();
  const started = performance.now();
  const statuses = new Map<number, number>();
  const lines = 8_064;
  const perRequest = 63;
  for (let sent = 0; sent < lines; sent += perRequest) {
    const batch = Array.from({ length: perRequest }, (_, offset) => line(sent + offset));
    const status = await post(running.base, batch);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = liveBytes();
  const ingestAfter = await post(running.base, [JSON.stringify({ event: 'post_tool_call', tool_name: 't' })]);
  const ready = (await fetch(`${running.web}/-/ready`)).status;
  console.log(`label-spellings: ${lines} lines of 63 KiB models and tools in ${seconds.toFixed(1)} s; answers ${JSON.stringify(Object.fromEntries(statuses))}`);
  console.log(`label-spellings: live memory before ${(before / MiB).toFixed(1)} MiB, after ${(after / MiB).toFixed(1)} MiB (+${((after - before) / MiB).toFixed(1)} MiB); ingest after ${ingestAfter}, ready ${ready}`);
  await running.close();
}

async function longIds(): Promise<void> {
  const running = await start();
  const turns = 1_400;
  const id = (index: number) => `${String(index).padStart(6, '0')}`.padStart(32_000, 't');
  const started = performance.now();
  for (let sent = 0; sent < turns; sent += 50) {
    const batch = Array.from({ length: 50 }, (_, offset) => JSON.stringify({ event: 'pre_llm_call', turn_id: id(sent + offset), platform: 'cli' }));
    await post(running.base, batch);
  }
  const fill = (performance.now() - started) / 1000;
  const timeOne = async () => {
    const start = performance.now();
    await post(running.base, [JSON.stringify({ event: 'post_tool_call', tool_name: 't', turn_id: id(turns + 1) })]);
    return performance.now() - start;
  };
  const eventTimes: number[] = [];
  for (let round = 0; round < 20; round += 1) eventTimes.push(await timeOne());
  eventTimes.sort((a, b) => a - b);
  const scrapeStart = performance.now();
  await (await fetch(`${running.web}/metrics`)).text();
  const scrape = performance.now() - scrapeStart;
  console.log(`long-ids: ${turns} turns with 32,000-character ids sent in ${fill.toFixed(1)} s; one more event (HTTP round trip) median ${eventTimes[10]?.toFixed(2)} ms; a scrape ${scrape.toFixed(1)} ms`);
  await running.close();
}

console.log(`Command: node --expose-gc --import tsx bench/strings.ts on ${new Date().toISOString()}; Node ${process.version}`);
await labelSpellings();
await longIds();
