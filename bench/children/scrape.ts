/**
 * Section 3 (child process): an in-process sidecar on real loopback listeners, label caps
 * raised by a config file, with an event-loop delay monitor, driven over IPC by
 * bench/sections/scrape.ts:
 *
 *   {cmd: 'seed', target}     grow to `target` live agent series (distinct tools and models)
 *   {cmd: 'render', times}    time registry.render() in process, and prom-client's
 *                             registry.metrics() over the same events (bench/alternatives.ts)
 *   {cmd: 'lagReset'} / {cmd: 'lagRead'}   monitorEventLoopDelay window
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { boundAddress, listen } from '../../src/app.js';
import { decodeBody } from '../../src/contract/decode.js';
import { createPromClientPipeline } from '../alternatives.js';
import { buildSidecar, seedSeries } from '../inprocess.js';
import { nowMs } from '../lib.js';

const { values } = parseArgs({ options: { config: { type: 'string' } } });

type Command =
  | { id: number; cmd: 'seed'; target: number }
  | { id: number; cmd: 'render'; times: number }
  | { id: number; cmd: 'lagReset' }
  | { id: number; cmd: 'lagRead' }
  | { id: number; cmd: 'exit' };

const sidecar = buildSidecar({ ...(values.config === undefined ? {} : { configFile: values.config }), defaultMetrics: true, listen: true });
const web = await listen(sidecar.webApp, sidecar.config.web.listen);
const ingest = await listen(sidecar.ingestApp, sidecar.config.ingest.listen);
// prom-client used directly, fed the same events, for the render comparison.
const prom = createPromClientPipeline(sidecar.config, true);
const feedProm = (body: Buffer): void => {
  prom.dispatcher.applyBatch(decodeBody(body, { format: 'ndjson', maxEvents: 100_000, arrivedAt: Date.now() / 1000 }).events);
};
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let nextIndex = 0;

const send = (message: unknown): void => {
  if (process.connected) process.send?.(message);
};

async function handle(command: Command): Promise<unknown> {
  switch (command.cmd) {
    case 'seed':
      nextIndex = seedSeries(sidecar, command.target, 'scrape', nextIndex, feedProm);
      return { series: sidecar.registry.agentSeries() };
    case 'render': {
      // Ours and prom-client's registry.metrics() on the same series, taking turns.
      const ms: number[] = [];
      const promMs: number[] = [];
      let bytes = 0;
      let promBytes = 0;
      let lines = 0;
      for (let time = 0; time < command.times; time += 1) {
        let started = nowMs();
        const text = await sidecar.registry.render();
        ms.push(nowMs() - started);
        bytes = Buffer.byteLength(text);
        lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
        started = nowMs();
        const promText = await prom.registry.metrics();
        promMs.push(nowMs() - started);
        promBytes = Buffer.byteLength(promText);
      }
      return { ms, bytes, lines, promMs, promBytes };
    }
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
send({ ready: true, web: `http://${boundAddress(web)}`, ingest: `http://${boundAddress(ingest)}` });
