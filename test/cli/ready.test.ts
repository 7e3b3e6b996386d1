/** `ready`: the readiness probe a service manager runs, against the real binary. */
import { execFile, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { probeUrl } from '../../src/cli/ready.js';
import { MAIN, startSidecarProcess } from '../support/process.js';

const probe = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [MAIN, 'ready', ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, ...env }, timeout: 20_000 });

/** The probe as a child the test's own event loop keeps serving beside. */
const probeAsync = (args: string[]): Promise<{ code: number | null; stderr: string }> =>
  new Promise((resolve) => {
    const child = execFile(process.execPath, [MAIN, 'ready', ...args], { env: { PATH: process.env.PATH }, timeout: 20_000 }, (_error, _stdout, stderr) =>
      resolve({ code: child.exitCode, stderr }));
  });

describe('hermes-prometheus-sidecar ready', () => {
  it('reaches a wildcard listener by loopback and an IPv6 one in brackets', () => {
    // A listener beyond loopback requires a token, so the probe's configuration has one.
    const url = (address: string) => probeUrl(loadConfig({ argv: [`--ingest.listen-address=${address}`], env: { HERMES_SIDECAR_INGEST_TOKEN: 't' } }));
    expect([url('0.0.0.0:9479'), url(':9479'), url('[::]:9479'), url('[::1]:9479'), url('127.0.0.2:1')]).toEqual([
      'http://127.0.0.1:9479/-/ready', 'http://127.0.0.1:9479/-/ready', 'http://[::1]:9479/-/ready', 'http://[::1]:9479/-/ready', 'http://127.0.0.2:1/-/ready',
    ]);
  });

  it('exits 0 once the sidecar is ready, through ingest with its token, whatever the web listener requires', async () => {
    const env = { HERMES_SIDECAR_INGEST_TOKEN: 'probe-token' };
    const sidecar = await startSidecarProcess([], env);
    try {
      const ingest = new URL(sidecar.ingest).host;
      const ready = probe([`--ingest.listen-address=${ingest}`, '--timeout=5'], env);
      expect([ready.status, ready.stderr]).toEqual([0, '']);
      // The ingest route answers like the web one, and only with the token.
      expect((await fetch(`${sidecar.ingest}/-/ready`)).status).toBe(401);
      const answer = await fetch(`${sidecar.ingest}/-/ready`, { headers: { authorization: 'Bearer probe-token' } });
      expect([answer.status, await answer.text()]).toEqual([200, 'Ready\n']);
      const wrong = probe([`--ingest.listen-address=${ingest}`, '--timeout=5'], { HERMES_SIDECAR_INGEST_TOKEN: 'other' });
      expect([wrong.status, wrong.stderr]).toEqual([1, `hermes-prometheus-sidecar ready: http://${ingest}/-/ready refused the ingest token: give the probe the sidecar's HERMES_SIDECAR_INGEST_TOKEN or --ingest.token-file.\n`]);
    } finally {
      await sidecar.stop();
    }
  });

  it('exits 1 with one sentence naming the last answer when the sidecar is not ready in time, and 2 for a bad timeout', async () => {
    // A stand-in that is never ready, as a sidecar over its memory limit answers.
    const notReady = createServer((_request, response) => response.writeHead(503, { 'content-type': 'text/plain' }).end('Over the memory limit\n'));
    await new Promise<void>((resolve) => notReady.listen(0, '127.0.0.1', resolve));
    const { port } = notReady.address() as AddressInfo;
    try {
      const waited = await probeAsync([`--ingest.listen-address=127.0.0.1:${port}`, '--timeout=0.5']);
      expect([waited.code, waited.stderr]).toEqual([1, `hermes-prometheus-sidecar ready: the sidecar was not ready at http://127.0.0.1:${port}/-/ready within 0.5 s (last answer: 503 Over the memory limit).\n`]);
    } finally {
      await new Promise((resolve) => notReady.close(resolve));
    }
    const bad = probe(['--timeout=soon']);
    expect([bad.status, bad.stderr]).toEqual([2, 'hermes-prometheus-sidecar ready: --timeout=soon must be a positive number of seconds (see --help).\n']);
  });
});
