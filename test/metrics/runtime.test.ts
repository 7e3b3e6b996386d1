import { execFileSync } from 'node:child_process';
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { runtimeMetrics } from '../../src/metrics/runtime.js';

const LINT_FAILING = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

const shape = (metric: { name: string; help: string; type: unknown }) => `${metric.name} ${String(metric.type)} ${metric.help}`;

describe('runtime metrics', () => {
  it('are prom-client\'s default metrics, name, type and help, less the three *_total gauges promtool refuses', async () => {
    const registry = new client.Registry();
    client.collectDefaultMetrics({ register: registry });
    const expected = (await registry.getMetricsAsJSON()).filter((metric) => !LINT_FAILING.includes(metric.name)).map(shape);
    const families = await runtimeMetrics().collect();
    expect(families.map(shape)).toEqual(expected);
    expect(families.map((family) => family.name)).toContain('process_cpu_seconds_total');
  });

  it('count CPU seconds as prom-client does: user plus system, rising from one scrape to the next', async () => {
    const runtime = runtimeMetrics();
    const cpu = async () => {
      const families = await runtime.collect();
      const value = (name: string) => {
        const [series] = families.find((family) => family.name === name)?.series() ?? [];
        return series !== undefined && 'value' in series ? series.value : Number.NaN;
      };
      return { user: value('process_cpu_user_seconds_total'), system: value('process_cpu_system_seconds_total'), total: value('process_cpu_seconds_total') };
    };
    const first = await cpu();
    let spin = 0;
    for (let index = 0; index < 2e7; index += 1) spin += index % 7;
    expect(spin).toBeGreaterThan(0);
    const second = await cpu();
    expect(second.total).toBeCloseTo(second.user + second.system, 9);
    expect(second.user).toBeGreaterThan(first.user);
    expect(second.total).toBeGreaterThan(first.total);
  });

  it('load neither prom-client\'s index (Pushgateway, node:https) nor @opentelemetry/api', () => {
    const script = [
      "const { runtimeMetrics } = await import('./src/metrics/runtime.ts');",
      'await runtimeMetrics().collect();',
      "const { createRequire } = await import('node:module');",
      'console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));',
    ].join('\n');
    const loaded = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
    expect(loaded.some((file) => file.includes('/prom-client/lib/metrics/gc.js'))).toBe(true);
    expect(loaded.filter((file) => file.includes('@opentelemetry') || file.endsWith('/prom-client/index.js') || file.includes('pushgateway'))).toEqual([]);
  });
});
