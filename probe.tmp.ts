import { gunzipSync } from 'node:zlib';
import { honestScrapes, repeatScrapers } from './test/support/fairness.js';
import { startSidecarProcess } from './test/support/process.js';
import { scrapeSamples } from './test/support/accounting.js';
const s = await startSidecarProcess(process.argv.slice(2));
const ok = (b: Buffer) => gunzipSync(b).length > 0;
for (const mix of [{ head: 0, get: 64 }]) {
  const a = await repeatScrapers(s.web, mix);
  const r = await honestScrapes(s.web, 100, ok);
  console.log(JSON.stringify(mix), r.ok, r.p50.toFixed(1), r.p99.toFixed(1), a.requests(), r.latencies.filter((l, i) => l > 900).map((l) => l.toFixed(0)).join(','));
  await a.stop();
}
const m = await scrapeSamples(s);
console.log([...m].filter(([k, v]) => k.startsWith('hermes_sidecar_connections_closed_total{listener="web"') && v > 0).map(([k, v]) => `${/reason="(\w+)/.exec(k)?.[1]}=${v}`).join(' '));
await s.stop('SIGKILL');
