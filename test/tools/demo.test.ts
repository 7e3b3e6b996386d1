/**
 * `npm run demo`: its queries read today's metric and label names; the pages it prints answer
 * on the Prometheus it starts; and a SIGTERM or SIGINT sent to npm alone stops everything it
 * started: no process, no listener and no temporary directory is left.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/catalogue.js';
import { OVERVIEW_QUERIES, prometheusPages, uiPrefixes } from '../../tools/prometheusPages.js';
import { recordingRules } from '../monitoring/bundle.js';
import { vectorSelectors } from '../monitoring/promql.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { prometheus as prometheusTool } from '../support/tools.js';
import { alive, commandLine, descendantsOf, refused, waitFor } from '../support/tree.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const tool = prometheusTool();

/** The label names a series of this name carries (histogram series resolved to their family). */
function labelsOf(series: string): readonly string[] | undefined {
  for (const spec of Object.values(CATALOGUE)) {
    if (spec.name === series) return spec.labelNames;
    if (spec.type === 'histogram' && series === `${spec.name}_bucket`) return [...spec.labelNames, 'le'];
    if (spec.type === 'histogram' && (series === `${spec.name}_sum` || series === `${spec.name}_count`)) return spec.labelNames;
  }
  return undefined;
}

describe('the demo queries', () => {
  const recorded = new Set(recordingRules().map((rule) => rule.record));

  it.each(OVERVIEW_QUERIES.map((query) => [query] as const))('%s reads catalogue series and groups by their labels', (query) => {
    const selectors = vectorSelectors(query);
    expect(selectors.length).toBeGreaterThan(0);
    const labels = new Set<string>();
    for (const { name } of selectors) {
      const known = labelsOf(name);
      expect(known !== undefined || recorded.has(name), `${name} is a catalogue series or a recording rule`).toBe(true);
      for (const label of known ?? []) labels.add(label);
    }
    for (const [, list = ''] of query.matchAll(/\bby \(([^)]*)\)/g)) {
      for (const label of list.split(',').map((part) => part.trim())) expect([...labels], `by (${label})`).toContain(label);
    }
  });
});

describe('the pages the demo prints', () => {
  it('tries the classic UI first on Prometheus 2 and the new one first on Prometheus 3', () => {
    expect(uiPrefixes('2.42.0+ds')).toEqual(['/classic', '']);
    expect(uiPrefixes('3.5.0')).toEqual(['', '/classic']);
    expect(uiPrefixes(undefined)).toEqual(['/classic', '']);
  });

  it('picks the prefix whose alerts page answers', async () => {
    const pages = async (version: string, serving: string) =>
      prometheusPages('http://p', async (url) => {
        if (url === 'http://p/api/v1/status/buildinfo') return { status: 200, json: async () => ({ data: { version } }) };
        return { status: url.startsWith(`http://p${serving}/`) && !url.slice(`http://p${serving}`.length).startsWith('/classic') ? 200 : 404, json: async () => ({}) };
      });
    expect((await pages('2.42.0+ds', '/classic')).alerts).toBe('http://p/classic/alerts');
    expect((await pages('2.55.0', '')).alerts).toBe('http://p/alerts');
    expect((await pages('3.5.0', '')).graph).toMatch(/^http:\/\/p\/graph\?g0\.expr=/);
  });

  describe.skipIf(tool.path === undefined)(`on a real Prometheus${tool.skipReason ? ` (${tool.skipReason})` : ''}`, () => {
    let prometheus: RunningPrometheus;
    beforeAll(async () => {
      prometheus = await startPrometheus(tool.path ?? 'prometheus', '127.0.0.1:9', 5);
    });
    afterAll(async () => {
      await prometheus?.stop();
    });

    it('gives a graph and an alerts page that answer 200', async () => {
      const pages = await prometheusPages(prometheus.url);
      expect(pages.version).toMatch(/^\d+\.\d+/);
      expect((await fetch(pages.alerts)).status).toBe(200);
      expect((await fetch(pages.graph)).status).toBe(200);
    });
  });
});

describe.skipIf(tool.path === undefined)(`npm run demo, stopped by a signal to npm${tool.skipReason ? ` (${tool.skipReason})` : ''}`, () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s stops the traffic, Prometheus and the sidecar, and removes the temp directory', async (signal) => {
    // --ignore-scripts skips only the predemo build: dist/ is built by the global setup, and
    // rebuilding it here would rewrite files other suites are starting the sidecar from.
    const npm = spawn('npm', ['run', 'demo', '--ignore-scripts'], {
      cwd: REPO,
      // No tsx compile cache: the run leaves nothing in the system temp directory.
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TSX_DISABLE_CACHE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a failed run can clean up everything it started.
      detached: true,
    });
    const exited = new Promise<number | null>((resolve) => npm.once('close', (code) => resolve(code)));
    let output = '';
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    try {
      await new Promise<void>((resolve, reject) => {
        npm.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8');
          if (output.includes('Ctrl-C to stop.')) resolve();
        });
        void exited.then((code) => reject(new Error(`the demo exited with ${code} before it was up: ${output}`)));
      });
      const printed = (label: string): string => {
        const url = new RegExp(`^  ${label} +(http://\\S+)`, 'm').exec(output)?.[1];
        if (url === undefined) throw new Error(`the demo printed no ${label} URL: ${output}`);
        return url;
      };
      const addresses = ['sidecar', 'ingest', 'prometheus'].map((label) => new URL(printed(label)).host);
      for (const page of [printed('alerts'), printed('overview graphs')]) expect((await fetch(page)).status, page).toBe(200);
      const tree = descendantsOf(npm.pid!);
      const prometheusPid = tree.find((pid) => commandLine(pid)[0]?.endsWith('prometheus'));
      const configFile = commandLine(prometheusPid ?? 0).find((arg) => arg.startsWith('--config.file='))?.slice('--config.file='.length);
      expect(configFile, 'prometheus runs with a config file in a temp directory').toBeDefined();
      const scratch = dirname(configFile ?? '');
      expect(existsSync(scratch)).toBe(true);
      for (const address of addresses) expect(await refused(address), address).toBe(false);

      process.kill(npm.pid!, signal);
      const code = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000))]);

      expect(code).toBe(0);
      expect(output).toContain('stopped');
      expect(await waitFor(() => tree.every((pid) => !alive(pid)), 10_000), `left running: ${tree.filter(alive).join(', ')}`).toBe(true);
      for (const address of addresses) expect(await refused(address), address).toBe(true);
      expect(existsSync(scratch)).toBe(false);
    } finally {
      // A failed run must not leave npm, node, the sidecar or Prometheus behind.
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // the group is already gone: the expected outcome
      }
    }
  }, 90_000);
});
