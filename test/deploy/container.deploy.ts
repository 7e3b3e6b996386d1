/**
 * The Containerfile, built and run for real with podman.
 *
 * No public image registry is reachable here, so the base image is built locally: a Debian
 * bookworm root filesystem from mmdebstrap with this machine's Node.js 20 and npm copied in
 * (bookworm's own nodejs package is 18, below the engines field) and this machine's CA
 * certificates (the npm registry is reached through a TLS-intercepting egress proxy). That image
 * is passed as BASE_IMAGE to this very Containerfile. The machine has cgroup v1 and v2 mounted
 * side by side and no CAP_SYS_RESOURCE, so podman runs with runc (crun refuses the hybrid
 * layout) on cgroupfs, ulimits at or below the current ones, vfs storage in a throwaway
 * directory and the host network (traffic stays on 127.0.0.1).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseSamples } from '../support/exposition.js';
import { candidatePort, retryOnAddressInUse } from '../support/ports.js';
import { locate } from '../support/tools.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const tools = ['podman', 'runc', 'mmdebstrap'].map((name) => locate(name, 'apt-get install podman runc mmdebstrap'));
const skipReason = tools.find((tool) => tool.skipReason !== undefined)?.skipReason;
const BASE = 'localhost/hermes-sidecar-test-base:bookworm';
const IMAGE = 'localhost/hermes-prometheus-sidecar:test';
const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();

const scratch = mkdtempSync(join(tmpdir(), 'sidecar-container-'));
const podmanEnv = {
  ...process.env,
  CONTAINERS_CONF: join(scratch, 'containers.conf'),
  CONTAINERS_STORAGE_CONF: join(scratch, 'storage.conf'),
};

/** Hermes' own user in its image, which owns the Hermes home the sidecar's image mounts. */
const HOME_OWNER = 10000;

function podman(args: readonly string[], options: { allowFailure?: boolean } = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('podman', args, { env: podmanEnv, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (result.status !== 0 && options.allowFailure !== true) {
    throw new Error(`podman ${args.join(' ')} exited with ${result.status}: ${result.stderr.slice(-2000)}`);
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function timed<T>(label: string, work: () => T): T {
  const started = Date.now();
  const result = work();
  console.log(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

function writePodmanConfig(): void {
  writeFileSync(
    podmanEnv.CONTAINERS_STORAGE_CONF,
    `[storage]\ndriver = "vfs"\ngraphroot = "${join(scratch, 'storage')}"\nrunroot = "${join(scratch, 'run')}"\n`,
  );
  writeFileSync(
    podmanEnv.CONTAINERS_CONF,
    [
      '[containers]',
      'netns = "host"',
      // Raising a limit needs CAP_SYS_RESOURCE, which this machine does not grant even to root.
      'default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      '',
    ].join('\n'),
  );
}

function buildBaseImage(): void {
  const tarball = join(scratch, 'base.tar');
  // This machine's Node.js and npm, wherever they are installed.
  const node = realpathSync(process.execPath);
  const npm = join(execFileSync('npm', ['root', '--global'], { encoding: 'utf8' }).trim(), 'npm');
  const hooks = [
    `copy-in ${node} /usr/bin`,
    'mkdir -p "$1/usr/lib/node_modules"',
    `copy-in ${npm} /usr/lib/node_modules`,
    'chroot "$1" ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/bin/npm',
    // Extra certificate authorities this machine trusts (here: the egress proxy's), if any.
    ...(existsSync('/usr/local/share/ca-certificates')
      ? ['copy-in /usr/local/share/ca-certificates /usr/local/share', 'chroot "$1" update-ca-certificates']
      : []),
    'chroot "$1" node --version',
    'chroot "$1" npm --version',
  ];
  execFileSync(
    'mmdebstrap',
    [
      '--quiet',
      '--variant=minbase',
      '--include=ca-certificates,libstdc++6',
      '--dpkgopt=path-exclude=/usr/share/doc/*',
      '--dpkgopt=path-exclude=/usr/share/man/*',
      '--dpkgopt=path-exclude=/usr/share/locale/*',
      ...hooks.map((hook) => `--customize-hook=${hook}`),
      'bookworm',
      tarball,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  podman(['import', '--change', 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt', tarball, BASE]);
  rmSync(tarball);
}

function buildImage(): void {
  podman([
    'build',
    '--layers=false',
    '--format=docker',
    '--network=host',
    '--ulimit=nofile=1024:1024',
    '--ulimit=nproc=4096:4096',
    `--build-arg=BASE_IMAGE=${BASE}`,
    `--build-arg=HERMES_SIDECAR_REVISION=${commit}`,
    '--file',
    join(REPO, 'Containerfile'),
    '--tag',
    IMAGE,
    REPO,
  ]);
}

const inImage = (script: string): string => podman(['run', '--rm', '--entrypoint', 'node', IMAGE, '-e', script]).stdout;

async function waitUntilReady(url: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} never answered 200`);
}

/** The addresses a detached container's sidecar logged once it listened. */
async function listenedAddresses(name: string): Promise<{ web: string; ingest: string }> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    const listening = podman(['logs', name], { allowFailure: true })
      .stdout.split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; web?: string; ingest?: string })
      .find((line) => line.msg === 'listening');
    if (listening?.web !== undefined && listening.ingest !== undefined) return { web: listening.web, ingest: listening.ingest };
    if (podman(['inspect', '--format', '{{.State.Running}}', name], { allowFailure: true }).stdout.trim() === 'false') break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const logs = podman(['logs', name], { allowFailure: true });
  throw new Error(`${name} never logged its listen addresses: ${logs.stdout}${logs.stderr}`);
}

describe.skipIf(skipReason !== undefined)(`Containerfile under podman (${skipReason ?? 'podman, runc, mmdebstrap'})`, () => {
  beforeAll(() => {
    writePodmanConfig();
    timed('container: base image from mmdebstrap', buildBaseImage);
    timed('container: podman build of the Containerfile', buildImage);
  }, 20 * 60_000);

  afterAll(() => {
    // vfs layers are full copies owned by root: podman removes its own storage, then the directory goes.
    podman(['system', 'reset', '--force'], { allowFailure: true });
    rmSync(scratch, { recursive: true, force: true });
  }, 5 * 60_000);

  it('runs as a non-root user, with a curl-free healthcheck, the revision label and the binary as entrypoint', () => {
    const [image] = JSON.parse(podman(['image', 'inspect', IMAGE]).stdout) as [
      { Config: { User: string; Entrypoint: string[]; Labels: Record<string, string> }; Healthcheck: { Test: string[] } },
    ];
    expect(image.Config.User).toBe('65532:65532');
    expect(image.Config.Entrypoint).toEqual(['node', '/app/dist/main.js']);
    expect(image.Healthcheck.Test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(image.Config.Labels['org.opencontainers.image.revision']).toBe(commit);
    expect(inImage('console.log(process.getuid())').trim()).toBe('65532');
  });

  it('holds only the production dependencies of package-lock.json', () => {
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const expected = Object.entries(lock.packages)
      .filter(([path, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) && entry.dev !== true)
      .map(([path]) => path.slice('node_modules/'.length))
      .sort();
    const listing = inImage(
      "const fs = require('fs'); const top = fs.readdirSync('/app/node_modules').filter((n) => !n.startsWith('.'));" +
        "console.log(JSON.stringify(top.flatMap((n) => n.startsWith('@') ? fs.readdirSync('/app/node_modules/' + n).map((m) => n + '/' + m) : [n])))",
    );
    const installed = (JSON.parse(listing) as string[]).sort();
    expect(installed).toEqual(expected);
    expect(installed).toContain('express');
    expect(installed).not.toContain('typescript');
  });

  it('ships the bridge plugin without its tests or caches, and install-plugin works from the image', () => {
    const plugin = JSON.parse(inImage("console.log(JSON.stringify(require('fs').readdirSync('/app/plugin/hermes_prometheus_bridge').sort()))")) as string[];
    expect(plugin).toEqual(readdirSync(join(REPO, 'plugin/hermes_prometheus_bridge')).filter((name) => name !== '__pycache__').sort());

    const home = join(scratch, 'hermes-home');
    mkdirSync(home);
    writeFileSync(join(home, 'config.yaml'), '# my Hermes settings\nmodel: anthropic/claude-sonnet-4.6\nplugins:\n  enabled: [other_plugin]\n');
    // A home as Hermes' own user leaves it (0755, owned by that user): the image's user (65532)
    // cannot write it, and the error says to run as the owner, which then works.
    chownSync(home, HOME_OWNER, HOME_OWNER);
    chownSync(join(home, 'config.yaml'), HOME_OWNER, HOME_OWNER);
    chmodSync(home, 0o755);
    const refused = podman(['run', '--rm', '--volume', `${home}:/hermes`, IMAGE, 'install-plugin', '--hermes-home', '/hermes', '--enable'], { allowFailure: true });
    expect(refused.status).toBe(1);
    // podman adds its own log lines (healthcheck timers without systemd) to the same stderr.
    expect(refused.stderr.split('\n').filter((line) => line.startsWith('install-plugin:'))).toEqual([
      `install-plugin: permission denied writing /hermes/plugins: run install-plugin as the owner of /hermes (uid ${HOME_OWNER}, gid ${HOME_OWNER}); in a container, add --user ${HOME_OWNER}:${HOME_OWNER}`,
    ]);
    podman(['run', '--rm', '--user', `${HOME_OWNER}:${HOME_OWNER}`, '--volume', `${home}:/hermes`, IMAGE, 'install-plugin', '--hermes-home', '/hermes', '--enable']);
    const config = readFileSync(join(home, 'config.yaml'), 'utf8');
    expect((parseYaml(config) as { plugins: { enabled: string[] } }).plugins.enabled).toEqual(['other_plugin', 'hermes_prometheus_bridge']);
    expect(config).toContain('# my Hermes settings');
    expect(readdirSync(join(home, 'plugins/hermes_prometheus_bridge')).sort()).toEqual(plugin);
  });

  it('prints its version with the revision it was built from', () => {
    const version = podman(['run', '--rm', IMAGE, '--version']).stdout;
    expect(version).toBe(`hermes-prometheus-sidecar 0.1.0 (revision ${commit})\n  node ${process.version}\n`);
  });

  it('serves events posted to it, passes its healthcheck, and stops with status 0 on podman stop', async () => {
    const name = `hermes-sidecar-test-${process.pid}`;
    try {
      // Host network. The image's healthcheck reads the web port from its environment, so the web
      // port is chosen here (outside the ephemeral range, the start retried if it was taken); the
      // ingest port is the kernel's choice, read from the "listening" log line.
      const { web, ingest } = await retryOnAddressInUse(() => {
        podman(['rm', '--force', name], { allowFailure: true });
        const webAddress = `127.0.0.1:${candidatePort()}`;
        podman(['run', '--detach', '--name', name, '--env', `HERMES_SIDECAR_WEB_LISTEN_ADDRESS=${webAddress}`, '--env', 'HERMES_SIDECAR_INGEST_LISTEN_ADDRESS=127.0.0.1:0', IMAGE]);
        return listenedAddresses(name);
      });
      await waitUntilReady(`http://${web}/-/ready`);
      const posted = await fetch(`http://${ingest}/v1/events`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-ndjson' },
        body: readFileSync(join(REPO, 'test/fixtures/appendix-a.jsonl')),
      });
      expect(posted.status).toBe(202);
      expect(await posted.json()).toEqual({ accepted: 16, rejected: 0, errors: [] });
      const samples = parseSamples(await (await fetch(`http://${web}/metrics`)).text());
      const requests = (labels: string) => samples.get(`hermes_api_requests_total{${labels}}`);
      expect(requests('kind="main",provider="openrouter",model="anthropic/claude-sonnet-4.6",outcome="success"')).toBe(1);
      expect(requests('kind="main",provider="openrouter",model="anthropic/claude-sonnet-4.6",outcome="error"')).toBe(1);
      expect(requests('kind="auxiliary",provider="openrouter",model="google/gemini-3.5-flash",outcome="success"')).toBe(1);

      expect(podman(['healthcheck', 'run', name], { allowFailure: true }).status).toBe(0);

      podman(['stop', '--time', '20', name]);
      expect(podman(['inspect', '--format', '{{.State.ExitCode}}', name]).stdout.trim()).toBe('0');
      const logs = podman(['logs', name]).stdout;
      expect(logs).toContain('"applied_events":16');
      expect(logs).toContain('"msg":"stopped"');
    } finally {
      podman(['rm', '--force', name], { allowFailure: true });
    }
  });
});
