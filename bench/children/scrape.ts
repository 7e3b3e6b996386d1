/**
 * Scrape sections (child process): an in-process sidecar on real loopback listeners, label caps
 * raised by a config file, with an event-loop delay monitor, and next to it prom-client used
 * directly for the same catalogue (bench/alternatives.ts, with the same default process metrics),
 * fed the very same decoded events and served by a plain `node:http` server the same way.
 * Driven over IPC by bench/sections/scrape.ts and bench/sections/scrapeload.ts:
 *
 *   {cmd: 'seed', target}     grow both to `target` live agent series (distinct tools and models)
 *   {cmd: 'equivalence'}      every event-path sample of ours and prom-client's, compared
 *   {cmd: 'render', times}    registry.render() and prom-client's registry.metrics(), taking turns
 *   {cmd: 'applied'}          events applied so far by our dispatcher, after the queue drained
 *   {cmd: 'lagReset'} / {cmd: 'lagRead'}   monitorEventLoopDelay window
 *   {cmd: 'profileStart'} / {cmd: 'profileStop', file}   a V8 CPU profile of the window, written to `file`
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { gzip } from 'node:zlib';
import { boundAddress, listenOn } from '../../src/net/listener.js';
import { createPromClientPipeline } from '../alternatives.js';
import { compareSamples, expositionSamples } from '../equivalence.js';
import { buildSidecar, scrapeText, seedSeries } from '../inprocess.js';
import { nowMs } from '../lib.js';

const { values } = parseArgs({ options: { config: { type: 'string' } } });

type Command =
  | { id: number; cmd: 'seed'; target: number }
  | { id: number; cmd: 'equivalence' }
  | { id: number; cmd: 'render'; times: number }
  | { id: number; cmd: 'applied' }
  | { id: number; cmd: 'lagReset' }
  | { id: number; cmd: 'lagRead' }
  | { id: number; cmd: 'profileStart' }
  | { id: number; cmd: 'profileStop'; file: string }
  | { id: number; cmd: 'exit' };

// V8's CPU profiler (what `node --cpu-prof` runs), started and stopped around a window.
const session = new Session();
session.connect();
const post = (method: string): Promise<unknown> =>
  new Promise((resolve, reject) => session.post(method, (error, result) => (error === null ? resolve(result) : reject(error))));

/**
 * Both pipelines read one clock that ticks every 50 ms, so the events fed to both in one
 * synchronous step see the same time and their timestamp gauges agree.
 */
let now = Date.now() / 1000;
setInterval(() => {
  now = Date.now() / 1000;
}, 50).unref();
const clock = () => now;

const sidecar = buildSidecar({ ...(values.config === undefined ? {} : { configFile: values.config }), defaultMetrics: true, listen: true, clock });
const web = await listenOn(createServer(sidecar.webApp), sidecar.config.web.listen);
const ingest = await listenOn(createServer(sidecar.ingestApp), sidecar.config.ingest.listen);
const prom = createPromClientPipeline(sidecar.config, true, clock);
// prom-client served the plain way: render on request, one write (gzipped with zlib when asked).
const promServer = createServer((request, response) => {
  const gzipped = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  // The scrape-time gauges first, as the sidecar's /metrics does.
  prom.collect();
  prom.registry.metrics().then(
    (text) => {
      if (!gzipped) {
        response.writeHead(200, { 'content-type': prom.registry.contentType });
        response.end(text);
        return;
      }
      gzip(text, (error, body) => {
        response.writeHead(error === null ? 200 : 500, { 'content-type': prom.registry.contentType, 'content-encoding': 'gzip' });
        response.end(error === null ? body : undefined);
      });
    },
    () => {
      response.writeHead(500);
      response.end();
    },
  );
});
await new Promise<void>((resolve) => promServer.listen(0, '127.0.0.1', resolve));

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let nextIndex = 0;

const send = (message: unknown): void => {
  if (process.connected) process.send?.(message);
};

async function handle(command: Command): Promise<unknown> {
  switch (command.cmd) {
    case 'seed':
      nextIndex = seedSeries(sidecar, command.target, 'scrape', nextIndex, (events) => prom.dispatcher.applyBatch(events));
      return { series: sidecar.registry.agentSeries() };
    case 'equivalence': {
      prom.collect();
      const check = compareSamples({
        ours: expositionSamples(await scrapeText(sidecar)),
        'prom-client': expositionSamples(await prom.registry.metrics()),
      });
      return { check, applyErrors: { ours: sidecar.applyErrors(), prom: prom.applyErrors() } };
    }
    case 'render': {
      // Ours and prom-client's registry.metrics() on the same series, taking turns (who goes
      // first alternates).
      const ms: number[] = [];
      const promMs: number[] = [];
      let bytes = 0;
      let promBytes = 0;
      let lines = 0;
      const timeOurs = async () => {
        const started = nowMs();
        const text = await sidecar.registry.render();
        ms.push(nowMs() - started);
        bytes = Buffer.byteLength(text);
        lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
      };
      const timeProm = async () => {
        const started = nowMs();
        prom.collect();
        const text = await prom.registry.metrics();
        promMs.push(nowMs() - started);
        promBytes = Buffer.byteLength(text);
      };
      for (let time = 0; time < command.times; time += 1) {
        if (time % 2 === 0) {
          await timeOurs();
          await timeProm();
        } else {
          await timeProm();
          await timeOurs();
        }
      }
      return { ms, bytes, lines, promMs, promBytes };
    }
    case 'applied':
      // Waits for the queue to empty without closing it (sidecar.drained() is the shutdown drain).
      for (let waited = 0; sidecar.queue.depth > 0; waited += 1) {
        if (waited > 10_000) throw new Error('the ingest queue did not drain in 10 s');
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return { applied: sidecar.dispatcher.applied };
    case 'lagReset':
      delay.reset();
      return {};
    case 'lagRead':
      return {
        p50: delay.percentile(50) / 1e6,
        p99: delay.percentile(99) / 1e6,
        max: delay.max / 1e6,
        mean: delay.mean / 1e6,
        count: delay.count,
      };
    case 'profileStart':
      await post('Profiler.enable');
      await post('Profiler.start');
      return {};
    case 'profileStop': {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      writeFileSync(command.file, JSON.stringify(profile));
      return { file: command.file };
    }
    case 'exit':
      setImmediate(() => process.exit(0));
      return {};
  }
}

process.on('message', (message: Command) => {
  void handle(message).then(
    (result) => send({ id: message.id, ok: true, result }),
    (error: unknown) => send({ id: message.id, ok: false, error: String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
// Belt and braces: end with the runner even if no disconnect arrives.
setInterval(() => {
  if (!process.connected || process.ppid === 1) process.exit(0);
}, 500).unref();
const promAddress = promServer.address();
send({
  ready: true,
  web: `http://${boundAddress(web)}`,
  ingest: `http://${boundAddress(ingest)}`,
  prom: typeof promAddress === 'object' && promAddress !== null ? `http://127.0.0.1:${promAddress.port}` : '',
});
