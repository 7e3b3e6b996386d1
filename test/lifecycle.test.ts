/** The real binary: start-up, endpoints, refusal of bad configuration, and graceful shutdown. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashSync } from 'bcryptjs';
import { REVISION } from '../src/version.js';
import { MAIN, startSidecarProcess } from './support/process.js';
import { scratchDir } from './support/scratch.js';

const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, ...env }, timeout: 10_000 });

const toolLines = (batch: number, size: number) =>
  Array.from({ length: size }, (_, index) =>
    JSON.stringify({ event: 'post_tool_call', tool_name: 'terminal', status: 'ok', tool_call_id: `b${batch}-${index}`, duration_ms: 3 }),
  ).join('\n');

describe('start-up', () => {
  it('serves /metrics with build info and self-metrics, health, readiness and a landing page', async () => {
    const sidecar = await startSidecarProcess();
    try {
      const metrics = await fetch(`${sidecar.web}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await metrics.text();
      expect(text).toMatch(new RegExp(`^hermes_sidecar_build_info\\{version="0\\.1\\.0",revision="${REVISION}",node_version="v20\\.\\d+\\.\\d+"\\} 1$`, 'm'));
      expect(text).toMatch(/^hermes_sidecar_queue_capacity 1024$/m);
      expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
      expect(await (await fetch(`${sidecar.web}/-/healthy`)).text()).toBe('Healthy\n');
      expect((await fetch(`${sidecar.web}/-/ready`)).status).toBe(200);
      const landing = await (await fetch(`${sidecar.web}/`)).text();
      expect(landing).toContain('<a href="/metrics">Metrics</a>');
      expect(landing).toContain(`Ingest listener: <code>127.0.0.1:`);
      expect(landing).toContain('Live plugin instances: 0.');
      // the ingest URL opened with GET names the method it wants
      const get = await fetch(`${sidecar.ingest}/v1/events`);
      expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
      expect((await fetch(`${sidecar.web}/debug/pprof`)).status).toBe(404);
      // the web listener takes no events
      expect((await fetch(`${sidecar.web}/v1/events`, { method: 'POST' })).status).toBe(404);
    } finally {
      await sidecar.stop();
    }
  });

  it('ends the idle footprint settings once ingest keeps it busy (src/startupFootprint.ts), and logs it once', async () => {
    const sidecar = await startSidecarProcess(['--log.level=debug']);
    const busyLines = () => sidecar.logs.filter((line) => line.code === 'busy');
    try {
      expect(busyLines()).toEqual([]);
      // Posted back to back until the watch's one-second window sees the work; bounded so a
      // sidecar that never says so fails here rather than at the test timeout.
      for (let batch = 0; busyLines().length === 0 && batch < 5000; batch += 1) {
        const response = await fetch(`${sidecar.ingest}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: toolLines(batch, 200) });
        expect(response.status).toBe(202);
      }
      expect(busyLines()).toMatchObject([{ level: 'debug', msg: "busy: V8's optimizing compiler and young-generation growth are on" }]);
    } finally {
      await sidecar.stop();
    }
  }, 120_000);

  it('serves metrics under --web.telemetry-path', async () => {
    const sidecar = await startSidecarProcess(['--web.telemetry-path=/custom']);
    try {
      expect((await fetch(`${sidecar.web}/custom`)).status).toBe(200);
      expect((await fetch(`${sidecar.web}/metrics`)).status).toBe(404);
    } finally {
      await sidecar.stop();
    }
  });

  it('prints every option with --help and the version with --version', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--ingest.queue-capacity=VALUE');
    expect(run(['--version']).stdout).toBe(`hermes-prometheus-sidecar 0.1.0 (revision ${REVISION})\n  node ${process.version}\n`);
    // the subcommands' options live in their own help, which the main help points to
    expect(help.stdout).toContain('(backfill --help)');
    expect(help.stdout).toContain('(install-plugin --help)');
    const backfillHelp = run(['backfill', '--help']);
    expect(backfillHelp.status).toBe(0);
    expect(backfillHelp.stdout).toMatch(/^Usage: hermes-prometheus-sidecar backfill .*\n[\s\S]*--state-db PATH/);
  });

  it.each([
    [['--hepl'], 'hermes-prometheus-sidecar: --hepl (from the command line) is not an option: did you mean --help? (see --help)\n'],
    [['--version=1'], 'hermes-prometheus-sidecar: --version (from the command line) takes no value: write --version alone.\n'],
    [['backfill', '--bogus'], 'backfill: --bogus is not an option. See backfill --help.\n'],
  ])('answers the argument error %j in one line with a pointer to --help, no usage', (args, stderr) => {
    const result = run(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(stderr);
    expect(result.stdout).toBe('');
  });

  it.each([
    [['--ingest.queue-capacity=-1'], {}, '--ingest.queue-capacity=-1 (from the command line) must be a positive whole number.'],
    [
      [],
      { HERMES_SIDECAR_LOG_LEVEL: 'chatty' },
      'HERMES_SIDECAR_LOG_LEVEL=chatty (from the environment, for --log.level) must be one of fatal, error, warn, info, debug, trace or silent.',
    ],
    [['--ingest.listen-address=0.0.0.0:0'], {}, 'is not a loopback address'],
  ])('refuses to start with %j %j', (args, env, message) => {
    const result = run(args, env);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });

  it('exits non-zero when a port is taken, naming the listener and its address', async () => {
    const first = await startSidecarProcess();
    try {
      const port = new URL(first.web).port;
      const second = run([`--web.listen-address=127.0.0.1:${port}`, '--ingest.listen-address=127.0.0.1:0']);
      expect(second.status).toBe(2);
      expect(second.stderr).toContain('EADDRINUSE');
      expect(second.stderr).toBe(
        `hermes-prometheus-sidecar: The web listener cannot listen on 127.0.0.1:${port} (--web.listen-address): the address is already in use (EADDRINUSE).\n`,
      );
      const ingestPort = new URL(first.ingest).port;
      const third = run(['--web.listen-address=127.0.0.1:0', `--ingest.listen-address=127.0.0.1:${ingestPort}`]);
      expect(third.status).toBe(2);
      expect(third.stderr).toBe(
        `hermes-prometheus-sidecar: The ingest listener cannot listen on 127.0.0.1:${ingestPort} (--ingest.listen-address): the address is already in use (EADDRINUSE).\n`,
      );
    } finally {
      await first.stop();
    }
  });
});

describe('graceful shutdown', () => {
  it('on SIGTERM under load, applies every event it answered 202 and exits 0', async () => {
    const sidecar = await startSidecarProcess();
    let accepted = 0;
    let sending = true;
    const sender = async (worker: number) => {
      for (let batch = 0; sending; batch += 1) {
        try {
          const response = await fetch(`${sidecar.ingest}/v1/events`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-ndjson' },
            body: toolLines(worker * 100_000 + batch, 200),
          });
          if (response.status === 202) accepted += ((await response.json()) as { accepted: number }).accepted;
          else {
            expect(response.status).toBe(503);
            expect(response.headers.get('retry-after')).toBe('1');
            await response.arrayBuffer();
          }
        } catch {
          sending = false; // the listener closed
        }
      }
    };
    const senders = [sender(0), sender(1), sender(2)];
    await new Promise((resolve) => setTimeout(resolve, 400));
    const code = await sidecar.stop('SIGTERM');
    sending = false;
    await Promise.all(senders);
    expect(code).toBe(0);
    const stopped = sidecar.logs.find((line) => line.msg === 'stopped');
    expect(accepted).toBeGreaterThan(0);
    expect(stopped?.applied_events).toBe(accepted);
  });

  it('stops on SIGINT too', async () => {
    const sidecar = await startSidecarProcess();
    expect(await sidecar.stop('SIGINT')).toBe(0);
    expect(sidecar.logs.map((line) => line.msg)).toEqual(['listening', 'shutting down: draining the ingest queue', 'stopped']);
  });
});

describe('--web.config.file', () => {
  it('puts basic auth in front of /metrics, and refuses to start on an invalid file', async () => {
    const dir = scratchDir('sidecar-web-');
    const file = join(dir, 'web.yml');
    writeFileSync(file, `basic_auth_users:\n  prometheus: ${hashSync('scrape-me', 4)}\n`);
    const sidecar = await startSidecarProcess([`--web.config.file=${file}`]);
    try {
      const anonymous = await fetch(`${sidecar.web}/metrics`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="hermes-prometheus-sidecar"');
      const wrong = await fetch(`${sidecar.web}/metrics`, { headers: { Authorization: `Basic ${Buffer.from('prometheus:nope').toString('base64')}` } });
      expect(wrong.status).toBe(401);
      const right = await fetch(`${sidecar.web}/metrics`, { headers: { Authorization: `Basic ${Buffer.from('prometheus:scrape-me').toString('base64')}` } });
      expect(right.status).toBe(200);
      expect(await right.text()).toContain('hermes_sidecar_build_info');
    } finally {
      await sidecar.stop();
    }
    writeFileSync(file, 'basic_auth_users:\n  prometheus: not-a-bcrypt-hash\n');
    const refused = run([`--web.config.file=${file}`, '--web.listen-address=127.0.0.1:0', '--ingest.listen-address=127.0.0.1:0']);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`--web.config.file: ${file}: basic_auth_users.prometheus`);
  });
});
