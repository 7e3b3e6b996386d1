/** An in-process sidecar on a fake clock, driven over real HTTP with supertest. */
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import request from 'supertest';
import type { Agent } from 'supertest';
import { createSidecar, type Sidecar, type SidecarDeps } from '../../src/app.js';
import { defaultConfig } from '../../src/config.js';
import type { MemoryProbe } from '../../src/ingest/memory.js';
import { parseSamples, type Samples } from './exposition.js';

export class FakeClock {
  constructor(public now = 1_800_000_000) {}
  readonly read = (): number => this.now;
  advance(seconds: number): void {
    this.now += seconds;
  }
}

export interface TestSidecar {
  readonly sidecar: Sidecar;
  readonly clock: FakeClock;
  readonly ingest: Agent;
  readonly web: Agent;
  /** Log lines written so far (JSON strings). */
  readonly logs: string[];
  postNdjson(lines: readonly unknown[], headers?: Record<string, string>): Promise<request.Response>;
  scrape(): Promise<string>;
  samples(): Promise<Samples>;
}

export function startTestSidecar(
  options: Record<string, string> = {},
  extra: { configFile?: string; memoryProbe?: MemoryProbe } & Pick<SidecarDeps, 'collectGarbage' | 'slicer'> = {},
): TestSidecar {
  const clock = new FakeClock();
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
  const config = defaultConfig({
    'web.listen-address': '127.0.0.1:0',
    'ingest.listen-address': '127.0.0.1:0',
    ...options,
    ...(extra.configFile === undefined ? {} : { 'config.file': extra.configFile }),
  });
  const { configFile: _configFile, ...deps } = extra;
  const sidecar = createSidecar(config, { logger, clock: clock.read, defaultMetrics: false, ...deps });
  const ingest = request.agent(sidecar.ingestApp);
  const web = request.agent(sidecar.webApp);
  const scrape = async () => {
    await sidecar.queue.drained();
    const response = await web.get('/metrics').expect(200);
    return response.text;
  };
  return {
    sidecar,
    clock,
    ingest,
    web,
    logs,
    postNdjson: (lines, headers = {}) =>
      ingest
        .post('/v1/events')
        .set({ 'Content-Type': 'application/x-ndjson', ...headers })
        .send(lines.map((line) => JSON.stringify(line)).join('\n')),
    scrape,
    samples: async () => parseSamples(await scrape()),
  };
}

export function readJsonl(path: string): Record<string, unknown>[] {
  return readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
