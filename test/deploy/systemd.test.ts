/**
 * The systemd unit: systemd-analyze accepts it without a single warning, its hardening scores
 * "OK" offline, and the command lines it runs really start the sidecar, wait for readiness and
 * stop it the way systemd would (KillSignal, success status).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashSync } from 'bcryptjs';
import { afterAll, describe, expect, it } from 'vitest';
import { candidatePort, retryOnAddressInUse } from '../support/ports.js';
import { systemdAnalyze } from '../support/tools.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const UNIT = join(REPO, 'deploy/systemd/hermes-prometheus-sidecar.service');
const INSTALLED_AT = '/usr/lib/node_modules/hermes-prometheus-sidecar';
const tool = systemdAnalyze();
const scratch = mkdtempSync(join(tmpdir(), 'sidecar-systemd-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `Key=value` lines of the [Service] section, in order (keys may repeat). */
function serviceSettings(text: string): [string, string][] {
  const section = text.split(/^\[Service\]$/m)[1]?.split(/^\[/m)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as [string, string]);
}

/** systemd's word splitting for the command lines used here: plain words and "double-quoted" ones. */
function splitCommand(line: string): string[] {
  return [...line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');
}

const settings = serviceSettings(readFileSync(UNIT, 'utf8'));
const setting = (key: string): string => settings.find(([name]) => name === key)?.[1] ?? '';

describe.skipIf(tool.path === undefined)(`systemd unit (${tool.skipReason ?? 'systemd-analyze'})`, () => {
  const analyze = (...args: string[]) => spawnSync(tool.path!, args, { encoding: 'utf8' });

  it('passes systemd-analyze verify with no warning at all', () => {
    const result = analyze('verify', UNIT);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('makes systemd-analyze verify complain about a mistyped key (the check above can fail)', () => {
    const broken = join(scratch, 'hermes-prometheus-sidecar.service');
    writeFileSync(broken, readFileSync(UNIT, 'utf8').replace('ProtectSystem=strict', 'ProtectSystm=strict'));
    expect(analyze('verify', broken).stderr).toContain("Unknown key 'ProtectSystm'");
  });

  it('scores an overall exposure below 2.0 ("OK") in systemd-analyze security', () => {
    const result = analyze('security', '--offline=true', '--no-pager', UNIT);
    const exposure = Number(/Overall exposure level for \S+: (\d+\.\d)/.exec(result.stdout)?.[1]);
    console.log(`systemd-analyze security: overall exposure ${exposure}`);
    expect(exposure).toBeLessThan(2);
  });

  it('declares its hardening', () => {
    expect(setting('Type')).toBe('exec');
    expect(setting('DynamicUser')).toBe('yes');
    expect(setting('NoNewPrivileges')).toBe('yes');
    expect(setting('ProtectSystem')).toBe('strict');
    expect(setting('PrivateTmp')).toBe('yes');
    expect(setting('RestrictAddressFamilies')).toBe('AF_INET AF_INET6 AF_UNIX');
    expect(setting('Restart')).toBe('on-failure');
    expect(setting('EnvironmentFile')).toBe('-/etc/hermes-prometheus-sidecar/env');
  });

  it('runs ExecStart, holds ExecStartPost until the sidecar is ready (basic auth on the web listener, a token on ingest), and stops on KillSignal with status 0', async () => {
    // The probe reads the ingest address from the environment the unit shares, so the port is
    // chosen up front; a start that finds it taken is run again on another one.
    await retryOnAddressInUse(() => runUnit(candidatePort()));
  });
});

/**
 * The unit's own command lines with the ingest listener on `ingest`, under the documented security
 * setup: basic auth on the web listener and a bearer token on ingest, from the environment file.
 * Rejects with the sidecar's stderr if it cannot listen.
 */
async function runUnit(ingest: number): Promise<void> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  for (const [, value] of settings.filter(([name]) => name === 'Environment')) {
    const [name, ...rest] = value.split('=');
    env[name!] = rest.join('=');
  }
  const webConfig = join(scratch, 'web-config.yml');
  writeFileSync(webConfig, `basic_auth_users:\n  prometheus: ${hashSync('scrape-secret', 4)}\n`);
  env.HERMES_SIDECAR_WEB_LISTEN_ADDRESS = '127.0.0.1:0';
  env.HERMES_SIDECAR_WEB_CONFIG_FILE = webConfig;
  env.HERMES_SIDECAR_INGEST_LISTEN_ADDRESS = `127.0.0.1:${ingest}`;
  env.HERMES_SIDECAR_INGEST_TOKEN = 'unit-token';
  // The unit's own command lines; only the install location is swapped for this clone.
  const [startBinary, ...startArgs] = splitCommand(setting('ExecStart').replace(INSTALLED_AT, REPO));
  const [postBinary, ...postArgs] = splitCommand(setting('ExecStartPost').replace(INSTALLED_AT, REPO));

  // ExecStartPost first, as if the sidecar were slow to come up: it must keep waiting.
  const post = spawn(postBinary!, postArgs, { env, stdio: 'ignore' });
  const postExited = new Promise<number | null>((resolve) => post.once('exit', (code) => resolve(code)));
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(post.exitCode).toBeNull();

    const service = spawn(startBinary!, startArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    service.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let web = '';
    service.stdout?.on('data', (chunk: Buffer) => {
      web ||= /"web":"([^"]+)"/.exec(chunk.toString('utf8'))?.[1] ?? '';
    });
    const serviceExited = new Promise<number | null>((resolve) => service.once('close', (code) => resolve(code)));
    try {
      const first = await Promise.race([postExited.then((code) => ({ post: code })), serviceExited.then((code) => ({ service: code }))]);
      if ('service' in first) throw new Error(`the sidecar exited (${first.service}) before it was ready: ${stderr}`);
      expect(first.post).toBe(0);
      if (service.exitCode !== null) throw new Error(`the sidecar exited (${service.exitCode}): ${stderr}`);
      // Ready, and the web listener really asks for credentials the probe never had.
      expect((await fetch(`http://${web}/-/ready`)).status).toBe(401);
      const authorization = `Basic ${Buffer.from('prometheus:scrape-secret').toString('base64')}`;
      expect((await fetch(`http://${web}/-/ready`, { headers: { authorization } })).status).toBe(200);
      service.kill(setting('KillSignal') as NodeJS.Signals);
      expect(await serviceExited).toBe(0);
    } finally {
      if (service.exitCode === null) service.kill('SIGKILL');
    }
  } finally {
    if (post.exitCode === null) post.kill('SIGKILL');
  }
}
