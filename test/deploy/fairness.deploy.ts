/**
 * Fairness under the connection caps, against the real binary (dist/main.js) on loopback with
 * the default settings: peers that fill a listener with valid, repeated or slow requests must
 * not starve an honest client. Each attack keeps a bounded number of connections (reopened as
 * the sidecar closes them) while an honest client makes a fixed number of requests, each given
 * a generous 5 s; the test counts the answers (≥ 99 %) and prints the p99 latency.
 * About 30 s with both cores busy, so it runs in `npm run test:deploy`; test/net/connections.test.ts
 * covers each policy in `npm test`. (bench/edge.ts, section "fairness", measures the same attacks
 * with more figures.)
 */
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { scrapeSamples } from '../support/accounting.js';
import { series } from '../support/exposition.js';
import { honestIngest, honestScrapes, repeatScrapers, slowBodies, type Attack } from '../support/fairness.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';

const running: SidecarProcess[] = [];
const attacks: Attack[] = [];
afterEach(async () => {
  for (const attack of attacks.splice(0)) await attack.stop();
  for (const sidecar of running.splice(0)) await sidecar.stop('SIGKILL');
});

async function sidecar(): Promise<SidecarProcess> {
  const started = await startSidecarProcess();
  running.push(started);
  return started;
}

const HONEST_REQUESTS = 100;

const REASONS = ['limit', 'evicted', 'slow_body', 'fairness', 'request_limit'] as const;

/** The listener's closes by reason (printed with the figures). */
async function closes(target: SidecarProcess, listener: string): Promise<Record<(typeof REASONS)[number], number>> {
  const samples = await scrapeSamples(target);
  const count = (reason: string) => samples.get(series('hermes_sidecar_connections_closed_total', { listener, reason })) ?? Number.NaN;
  return Object.fromEntries(REASONS.map((reason) => [reason, count(reason)])) as Record<(typeof REASONS)[number], number>;
}

describe('fairness at the connection caps (real binary)', () => {
  it('serves honest gzip scrapes while 64 connections repeat HEAD and gzip GET /metrics (issue 29 defect 1)', async () => {
    const target = await sidecar();
    // 32 connections keep a HEAD outstanding, 32 a gzip GET they read: the web cap is 64.
    const attack = await repeatScrapers(target.web, { head: 32, get: 32 });
    attacks.push(attack);
    const honest = await honestScrapes(target.web, HONEST_REQUESTS, (body) => gunzipSync(body).toString('utf8').includes('hermes_sidecar_build_info'));
    const sent = attack.requests();
    await attack.stop();
    const closed = await closes(target, 'web');
    process.stdout.write(`fairness, web: honest gzip scrapes ${honest.ok} of ${honest.count}, p50 ${honest.p50.toFixed(1)} ms, p99 ${honest.p99.toFixed(1)} ms; attackers made ${sent} requests; closed ${JSON.stringify(closed)}\n`);
    expect(sent).toBeGreaterThan(HONEST_REQUESTS);
    expect(honest.ok).toBeGreaterThanOrEqual(0.99 * HONEST_REQUESTS);
    // The repeating connections made room, counted; the honest ones were never refused.
    expect(closed.evicted + closed.fairness).toBeGreaterThan(0);
  }, 120_000);

  it('accepts honest keep-alive posts while 256 connections send bodies at one byte per second (issue 29 defect 2)', async () => {
    const target = await sidecar();
    const attack = await slowBodies(target.ingest, 256);
    attacks.push(attack);
    const honest = await honestIngest(target.ingest, HONEST_REQUESTS);
    const opened = attack.requests();
    await attack.stop();
    const closed = await closes(target, 'ingest');
    process.stdout.write(`fairness, ingest: honest posts ${honest.ok} of ${honest.count}, p50 ${honest.p50.toFixed(1)} ms, p99 ${honest.p99.toFixed(1)} ms; attackers opened ${opened} slow bodies; closed ${JSON.stringify(closed)}\n`);
    expect(opened).toBeGreaterThanOrEqual(256);
    expect(honest.ok).toBeGreaterThanOrEqual(0.99 * HONEST_REQUESTS);
    // The slow bodies made room, counted as such.
    expect(closed.slow_body).toBeGreaterThan(0);
  }, 120_000);
});
