/**
 * Package hygiene: what `npm pack` ships (docs and the plugin, never tests or Python caches) and
 * the metadata that points at the project's home. `--version` is tested with the binary's lifecycle.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const HOME = 'https://github.com/hermes-prometheus-sidecar/hermes-prometheus-sidecar';
const CACHE = `${REPO}plugin/hermes_prometheus_bridge/__pycache__`;

describe('npm package', () => {
  let files: string[] = [];
  beforeAll(() => {
    // A Python cache inside the plugin, as running the plugin's tests leaves behind.
    mkdirSync(CACHE, { recursive: true });
    writeFileSync(`${CACHE}/bridge.cpython-311.pyc`, '');
    const packed = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO, encoding: 'utf8' });
    files = (JSON.parse(packed) as [{ files: { path: string }[] }])[0].files.map((file) => file.path);
  });
  afterAll(() => rmSync(CACHE, { recursive: true, force: true }));

  it('ships the binary, the plugin, the monitoring bundle, the deployment files, docs and the licence', () => {
    for (const path of [
      'dist/main.js',
      'plugin/hermes_prometheus_bridge/bridge.py',
      'plugin/hermes_prometheus_bridge/plugin.yaml',
      'rules/hermes-alerts.yml',
      'dashboards/hermes-agent-overview.json',
      'prometheus.yml',
      'alertmanager.yml',
      'docs/runbook.md',
      'docs/scale-out.md',
      'deploy/systemd/hermes-prometheus-sidecar.service',
      'deploy/kubernetes/kustomization.yaml',
      'Containerfile',
      'LICENSE',
      'CHANGELOG.md',
      'README.md',
    ]) {
      expect(files, path).toContain(path);
    }
  });

  it('ships no tests, no Python caches and no sources of the build', () => {
    const unwanted = files.filter((path) => /(^|\/)(test|tests|__pycache__)\/|\.pyc$|^src\/|^bench\/|^\.ci\//.test(path));
    expect(unwanted).toEqual([]);
  });

  it('names the project home in repository, homepage and bugs, with the MIT licence', () => {
    const manifest = JSON.parse(readFileSync(`${REPO}package.json`, 'utf8')) as Record<string, unknown>;
    expect(manifest.repository).toEqual({ type: 'git', url: `git+${HOME}.git` });
    expect(manifest.homepage).toBe(`${HOME}#readme`);
    expect(manifest.bugs).toEqual({ url: `${HOME}/issues` });
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(`${REPO}LICENSE`, 'utf8')).toMatch(/^MIT License\n/);
  });
});

describe('install scripts of dependencies', () => {
  const manifest = JSON.parse(readFileSync(`${REPO}package.json`, 'utf8')) as { allowScripts?: Record<string, boolean> };
  const lock = JSON.parse(readFileSync(`${REPO}package-lock.json`, 'utf8')) as {
    packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
  };
  /** name@version of every locked package with an install script. */
  const scripted = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([where, entry]) => ({ name: where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length), version: entry.version ?? '' }));
  const reviewed = Object.keys(manifest.allowScripts ?? {});
  const covers = (key: string, { name, version }: { name: string; version: string }) => key === name || key === `${name}@${version}`;

  it('are each reviewed in allowScripts, so npm 11.16+ prints no install-scripts warning', () => {
    expect(scripted.filter((pkg) => !reviewed.some((key) => covers(key, pkg))).map((pkg) => `${pkg.name}@${pkg.version}`)).toEqual([]);
  });

  it('are the only entries of allowScripts (none stale)', () => {
    expect(reviewed.length).toBeGreaterThan(0);
    expect(reviewed.filter((key) => !scripted.some((pkg) => covers(key, pkg)))).toEqual([]);
  });
});
