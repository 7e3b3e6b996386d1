/**
 * The bridge as a pip-installed Hermes plugin: `plugin/pyproject.toml` builds a wheel offline with
 * Debian's setuptools and pip, the wheel installs into a fresh venv (built once for the file), and an entry-point scan that
 * follows Hermes' loader (plugin/tests/hermes_dispatch.py load_entry_point_plugin, after
 * hermes_cli/plugins_discovery.py and plugins_loader.py at 00067189) loads it from the venv and
 * drives a scripted conversation against the real sidecar binary.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { HeldPlugin } from '../support/driver.js';
import { parseSamples, series } from '../support/exposition.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { scratchDir } from '../support/scratch.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PLUGIN = path.join(ROOT, 'plugin');
const PLUGIN_NAME = 'hermes_prometheus_bridge';
/** Debian's interpreter: its python3-setuptools, python3-wheel, python3-pip and python3-venv build and install offline. */
const DEBIAN_PYTHON = '/usr/bin/python3';

function buildTools(): string | undefined {
  const probe = spawnSync(DEBIAN_PYTHON, ['-c', 'import setuptools, wheel, pip, venv'], { stdio: 'ignore' });
  if (probe.status === 0) return undefined;
  const reason = `SKIPPED: ${DEBIAN_PYTHON} lacks setuptools, wheel or pip (apt-get install python3-setuptools python3-wheel python3-pip)`;
  if (process.env.CI === 'true') throw new Error(`${reason}; under CI nothing may be skipped`);
  console.warn(reason);
  return reason;
}

const skipReason = buildTools();

/** Copies the plugin's sources (no caches) so the build's egg-info and build/ stay out of the tree. */
function copyPluginSources(into: string): string {
  const source = path.join(into, 'plugin');
  cpSync(PLUGIN, source, {
    recursive: true,
    filter: (from) => !from.includes('__pycache__') && !from.endsWith('.pyc') && !from.startsWith(path.join(PLUGIN, 'tests')),
  });
  return source;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync(command, args, { encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

let installed: { wheel: string; python: string } | undefined;

/** Builds the wheel and installs it into a fresh venv (once); returns the wheel's path and the venv's interpreter. */
function buildAndInstall(): { wheel: string; python: string } {
  installed ??= buildAndInstallOnce();
  return installed;
}

function buildAndInstallOnce(): { wheel: string; python: string } {
  const work = scratchDir('hermes-wheel-');
  const env = { TMPDIR: work, PIP_NO_CACHE_DIR: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INDEX: '1' };
  const source = copyPluginSources(work);
  const dist = path.join(work, 'dist');
  run(DEBIAN_PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-w', dist, source], env);
  const wheels = readdirSync(dist).filter((name) => name.endsWith('.whl'));
  expect(wheels).toHaveLength(1);
  const wheel = path.join(dist, wheels[0] ?? '');
  const venv = path.join(work, 'venv');
  // A venv without its own pip, filled by Debian's pip: what a user's `pip install` does, without ensurepip.
  run(DEBIAN_PYTHON, ['-m', 'venv', '--without-pip', venv], env);
  const python = path.join(venv, 'bin', 'python');
  run(DEBIAN_PYTHON, ['-m', 'pip', '--python', python, 'install', '--no-deps', wheel], env);
  return { wheel, python };
}

const pythonMinor = (python: string): string => run(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {}).trim();

const running: { stop(signal?: NodeJS.Signals): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const process of running.splice(0)) await process.stop('SIGKILL').catch(() => undefined);
});

async function untilLive(sidecar: SidecarProcess, done: (samples: ReadonlyMap<string, number>) => boolean): Promise<ReadonlyMap<string, number>> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const samples = parseSamples(await (await fetch(`${sidecar.web}/metrics`)).text());
    if (done(samples)) return samples;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the sidecar never showed the wheel-installed plugin live');
}

describe.skipIf(skipReason !== undefined)(`the bridge as a wheel${skipReason ? ` (${skipReason})` : ''}`, () => {
  it('builds offline, declares the hermes_agent.plugins entry point, and carries plugin.yaml and contract.json', () => {
    const { wheel, python } = buildAndInstall();
    const listing = run(python, ['-c', `import zipfile, sys; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))`, wheel], {}).split('\n');
    expect(listing).toEqual(expect.arrayContaining([`${PLUGIN_NAME}/__init__.py`, `${PLUGIN_NAME}/plugin.yaml`, `${PLUGIN_NAME}/contract.json`]));
    expect(listing.filter((name) => name.includes('tests/') || name.endsWith('.pyc'))).toEqual([]);
    const entryPoints = run(python, ['-c', `from importlib.metadata import entry_points; print([(e.name, e.value) for e in entry_points().select(group="hermes_agent.plugins")])`], {});
    expect(entryPoints.trim()).toBe(`[('${PLUGIN_NAME}', '${PLUGIN_NAME}')]`);
    const requires = run(python, ['-c', `from importlib.metadata import requires; print(requires("hermes-prometheus-bridge"))`], {});
    expect(requires.trim()).toBe('None'); // standard library only
  }, 120_000);

  it('has one version: package.json, the wheel, PLUGIN_VERSION and plugin.yaml', () => {
    const { python } = buildAndInstall();
    const packageVersion = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const wheelVersion = run(python, ['-c', 'from importlib.metadata import version; print(version("hermes-prometheus-bridge"))'], {}).trim();
    const manifestVersion = /^version:\s*(\S+)\s*$/m.exec(readFileSync(path.join(PLUGIN, PLUGIN_NAME, 'plugin.yaml'), 'utf8'))?.[1];
    const pluginVersion = /^PLUGIN_VERSION = "([^"]+)"$/m.exec(readFileSync(path.join(PLUGIN, PLUGIN_NAME, 'bridge.py'), 'utf8'))?.[1];
    expect([wheelVersion, manifestVersion, pluginVersion]).toEqual([packageVersion, packageVersion, packageVersion]);
  }, 120_000);

  it('loads through an entry-point scan as Hermes does and reports live to the real sidecar', async () => {
    const { python } = buildAndInstall();
    const sidecar = await startSidecarProcess();
    running.push(sidecar);
    const plugin = await HeldPlugin.start(python, `${sidecar.ingest}/v1/events`, { HERMES_SIDECAR_HEARTBEAT_INTERVAL: '0.5' }, [
      '--scenario', 'conversation', '--entry-point', PLUGIN_NAME,
    ]);
    try {
      expect(String(plugin.ready.plugin_file)).toBe(path.join(path.dirname(path.dirname(python)), 'lib', `python${pythonMinor(python)}`, 'site-packages', PLUGIN_NAME, '__init__.py'));
      const main = { kind: 'main', provider: 'openrouter', model: 'anthropic/claude-sonnet-4.6' };
      const samples = await untilLive(sidecar, (current) => current.get(series('hermes_plugin_instances', { state: 'live' })) === 1
        && current.get(series('hermes_api_requests_total', { ...main, outcome: 'success' })) === 7);
      expect(samples.get(series('hermes_api_requests_total', { ...main, outcome: 'error' }))).toBe(1);
      expect(samples.get(series('hermes_tool_calls_total', { tool: 'terminal', status: 'ok' }))).toBe(2);
    } finally {
      await plugin.stop();
    }
    expect(plugin.stderr).toBe('');
  }, 120_000);
});
