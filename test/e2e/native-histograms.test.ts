/**
 * Native histograms against the real thing: the sidecar binary, deterministic traffic
 * (tools/traffic.ts, fixed seed) and Debian's Prometheus 2.42 with `--enable-feature=native-histograms`,
 * scraping directly and, for the fleet path, through a Prometheus agent that remote-writes with
 * `send_native_histograms: true` to a central Prometheus (`--web.enable-remote-write-receiver`).
 *
 * Once the traffic has stopped and a scrape has happened after it, every catalogue histogram is
 * stored as native series (sample type `histogram`, no `_bucket` series); `histogram_count` and
 * `histogram_sum` equal the sidecar's own text `_count` and `_sum` exactly, directly and at the
 * central store; and `histogram_quantile` over the native series agrees with the classic quantile
 * of the text buckets within the two resolutions: the native bucket's relative width
 * 2^(2^-schema) - 1 (9.05% at schema 3) of the native estimate, plus the width of the classic
 * bucket the quantile falls in (both estimates lie in buckets that hold the observation at the
 * quantile's rank).
 *
 * Its exemplar storage keeps the buckets' exemplars with the native series. The same Prometheus
 * loads the monitoring bundle built for native histograms
 * (`build({histograms: 'native'})`): every dashboard query, recording rule and alert that differs
 * from the classic bundle evaluates without error and, dashboards and recording rules, with data.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { build, type GeneratedFile } from '../../monitoring/index.js';
import { TrafficModel } from '../../tools/traffic.js';
import { relativeBucketWidth } from '../../src/metrics/native.js';
import { parseSamples } from '../support/exposition.js';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { substituteVariables, type RunningPrometheus } from '../support/prometheus.js';
import { startConfiguredPrometheus } from '../support/prometheusModes.js';
import { decodeExposition, sortedLabelSamples, type DecodedFamily } from '../support/protobuf.js';
import { prometheus as prometheusTool } from '../support/tools.js';

const tool = prometheusTool();
const NATIVE_ACCEPT = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';
const QUANTILES = [0.5, 0.9, 0.99] as const;
/** Requests of generated traffic, each about this many lines: enough to fill every histogram family. */
const BATCHES = 30;
const BATCH_LINES = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


interface Panel {
  readonly targets?: { expr?: string }[];
  readonly panels?: Panel[];
}

/** Every query expression of the generated dashboards. */
function dashboardQueries(files: readonly GeneratedFile[]): string[] {
  const queries: string[] = [];
  const walk = (panels: readonly Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) if (target.expr !== undefined) queries.push(target.expr);
      walk(panel.panels ?? []);
    }
  };
  for (const file of files.filter((each) => each.path.startsWith('dashboards/hermes-'))) walk((JSON.parse(file.contents) as { panels: Panel[] }).panels);
  return queries;
}

/** Every rule of the generated rule files: recording rules by `record`, alerts by `alert`. */
function rules(files: readonly GeneratedFile[]): { record?: string; alert?: string; expr: string }[] {
  return files
    .filter((file) => file.path.startsWith('rules/') && !file.path.startsWith('rules/tests/') && file.path.endsWith('.yml'))
    .flatMap((file) => (parseYaml(file.contents) as { groups: { rules: { record?: string; alert?: string; expr: string }[] }[] }).groups.flatMap((group) => group.rules));
}

const NATIVE_BUNDLE = build({ histograms: 'native' });
const CLASSIC_BUNDLE = build();
/** What the native bundle changes: the histogram queries. */
const nativeOnly = <T>(native: readonly T[], classic: readonly T[]): T[] => {
  const classicTexts = new Set(classic.map((each) => JSON.stringify(each)));
  return native.filter((each) => !classicTexts.has(JSON.stringify(each)));
};

interface VectorItem {
  readonly metric: Record<string, string>;
  readonly value?: [number, string];
  readonly histogram?: [number, { count: string; sum: string }];
}

async function vector(prometheus: RunningPrometheus, expr: string): Promise<VectorItem[]> {
  const answer = await prometheus.query(expr);
  if (answer.status !== 'success') throw new Error(`${expr}: ${answer.error ?? 'error'}`);
  return (answer.data?.result ?? []) as VectorItem[];
}

/** `{a="x",b="y"}` of a result's labels, sorted, without the scrape's own (and empty ones). */
function seriesKey(labels: Record<string, string>): string {
  const pairs = Object.entries(labels)
    .filter(([name, value]) => !['__name__', 'job', 'instance'].includes(name) && value !== '')
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${name}="${value}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

interface ClassicSeries {
  count: number;
  sum: number;
  /** [upper bound, cumulative count], +Inf last. */
  readonly buckets: [number, number][];
}

/** The text exposition's histograms: family → series key → count, sum and cumulative buckets. */
function classicHistograms(text: string, names: readonly string[]): Map<string, Map<string, ClassicSeries>> {
  const samples = sortedLabelSamples(parseSamples(text));
  const families = new Map<string, Map<string, ClassicSeries>>(names.map((name) => [name, new Map()]));
  for (const [sampleSeries, value] of samples) {
    const brace = sampleSeries.indexOf('{');
    const sampleName = brace < 0 ? sampleSeries : sampleSeries.slice(0, brace);
    const suffix = /_(bucket|sum|count)$/.exec(sampleName)?.[1];
    const family = suffix === undefined ? undefined : families.get(sampleName.slice(0, -suffix.length - 1));
    if (family === undefined || suffix === undefined) continue;
    let labels = brace < 0 ? '' : sampleSeries.slice(brace);
    let le: number | undefined;
    if (suffix === 'bucket') {
      const match = /(?:,|\{)le="([^"]+)"/.exec(labels);
      le = match?.[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match?.[1]);
      labels = labels.replace(/le="[^"]+",?/, '').replace(',}', '}').replace('{}', '');
    }
    let entry = family.get(labels);
    if (entry === undefined) family.set(labels, (entry = { count: 0, sum: 0, buckets: [] }));
    if (suffix === 'count') entry.count = value;
    else if (suffix === 'sum') entry.sum = value;
    else entry.buckets.push([le as number, value]);
  }
  for (const family of families.values()) for (const entry of family.values()) entry.buckets.sort((a, b) => a[0] - b[0]);
  return families;
}

/** Prometheus' classic histogram_quantile (promql/quantile.go bucketQuantile), and the bucket it lands in. */
function classicQuantile(q: number, buckets: readonly [number, number][]): { value: number; width: number } | undefined {
  const total = buckets[buckets.length - 1]?.[1] ?? 0;
  if (total === 0) return undefined;
  let rank = q * total;
  const index = buckets.findIndex(([, cumulative]) => cumulative >= rank);
  // Past the highest finite bucket the classic quantile is only its bound: nothing to agree with.
  if (index < 0 || index === buckets.length - 1) return undefined;
  const [end, cumulative] = buckets[index] as [number, number];
  const start = index === 0 ? 0 : (buckets[index - 1] as [number, number])[0];
  let count = cumulative;
  if (index > 0) {
    const below = (buckets[index - 1] as [number, number])[1];
    count -= below;
    rank -= below;
  }
  return { value: start + (end - start) * (rank / count), width: end - start };
}

describe.skipIf(tool.path === undefined)(`native histograms in a real Prometheus 2.42${tool.skipReason ? ` (${tool.skipReason})` : ''}`, () => {
  let sidecar: SidecarProcess;
  let direct: RunningPrometheus;
  let agent: RunningPrometheus;
  let central: RunningPrometheus;
  /** After the traffic: the sidecar's text and protobuf answers, and its histogram families. */
  let text = '';
  let openMetrics = '';
  let decoded: DecodedFamily[] = [];
  let histogramNames: string[] = [];
  let classic = new Map<string, Map<string, ClassicSeries>>();
  const binary = tool.path ?? 'prometheus';
  const bundleDir = mkdtempSync(join(tmpdir(), 'sidecar-native-bundle-'));

  const scrapeConfig = (target: string) => [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    'scrape_configs:',
    '  - job_name: hermes-sidecar',
    '    static_configs:',
    `      - targets: [${JSON.stringify(target)}]`,
  ];

  /** True once every active target of `prometheus` was last scraped after `since` (epoch ms). */
  const scrapedSince = async (prometheus: RunningPrometheus, since: number): Promise<boolean> => {
    const body = (await (await fetch(`${prometheus.url}/api/v1/targets`)).json()) as { data: { activeTargets: { lastScrape: string; health: string }[] } };
    const targets = body.data.activeTargets;
    return targets.length > 0 && targets.every((target) => target.health === 'up' && Date.parse(target.lastScrape) > since);
  };

  beforeAll(async () => {
    // semconv on: the bundle's GenAI panels and rule read those histograms too. Every token type
    // of one model priced: that agent's sessions get a cost, so the session-cost panels have data.
    const configFile = join(bundleDir, 'sidecar.yaml');
    mkdirSync(bundleDir, { recursive: true });
    writeFileSync(configFile, 'prices:\n  openrouter:\n    google/gemini-3.5-flash: {input: 0.3, output: 2.5, cache_read: 0.075, cache_write: 0.3}\n');
    sidecar = await startSidecarProcess([`--config.file=${configFile}`, '--metrics.semconv=true']);
    const target = new URL(sidecar.web).host;
    const ruleFiles = NATIVE_BUNDLE.filter((file) => file.path.startsWith('rules/') && !file.path.startsWith('rules/tests/') && file.path.endsWith('.yml')).map((file) => {
      const path = join(bundleDir, file.path);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.contents);
      return path;
    });
    const directConfig = [...scrapeConfig(target), 'rule_files:', ...ruleFiles.map((file) => `  - ${JSON.stringify(file)}`), ''].join('\n');
    // One after the other, each kept as soon as it runs: afterAll stops whichever started, even
    // when the other failed to.
    direct = await startConfiguredPrometheus({ binary, mode: 'server', config: directConfig, extraArgs: ['--enable-feature=native-histograms,exemplar-storage'] });
    central = await startConfiguredPrometheus({
      binary,
      mode: 'server',
      config: 'global:\n  scrape_interval: 1s\n',
      extraArgs: ['--web.enable-remote-write-receiver', '--enable-feature=native-histograms'],
    });
    agent = await startConfiguredPrometheus({
      binary,
      mode: 'agent',
      config: [
        ...scrapeConfig(target),
        'remote_write:',
        `  - url: ${JSON.stringify(`${central.url}/api/v1/write`)}`,
        '    send_native_histograms: true',
        '    queue_config:',
        '      batch_send_deadline: 1s',
        '',
      ].join('\n'),
      extraArgs: ['--enable-feature=agent,native-histograms'],
    });

    // Deterministic traffic, each request applied (202) before the next; none after.
    const model = new TrafficModel({ seed: 21, agents: 4, errorRate: 0.05 });
    for (let batch = 0; batch < BATCHES; batch += 1) {
      const lines = [...model.batch(BATCH_LINES), ...(batch % 10 === 0 ? model.heartbeats() : [])];
      const answer = await fetch(`${sidecar.ingest}/v1/events`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-ndjson' },
        body: lines.map((line) => JSON.stringify(line)).join('\n'),
      });
      expect(answer.status).toBe(202);
    }
    const trafficEnded = Date.now();
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
      if ((await scrapedSince(direct, trafficEnded)) && (await scrapedSince(agent, trafficEnded))) break;
    }
    text = await (await fetch(`${sidecar.web}/metrics`)).text();
    openMetrics = await (await fetch(`${sidecar.web}/metrics`, { headers: { Accept: 'application/openmetrics-text' } })).text();
    decoded = decodeExposition(new Uint8Array(await (await fetch(`${sidecar.web}/metrics`, { headers: { Accept: NATIVE_ACCEPT } })).arrayBuffer()));
    histogramNames = decoded.filter((family) => family.type === 'HISTOGRAM' && family.name.startsWith('hermes_')).map((family) => family.name);
    classic = classicHistograms(text, histogramNames);
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await Promise.all([direct?.stop(), central?.stop()]);
    await sidecar?.stop();
    rmSync(bundleDir, { recursive: true, force: true });
  });

  /** histogram_count and histogram_sum of every series of every family, as `family series` → [count, sum]. */
  const nativeFigures = async (prometheus: RunningPrometheus): Promise<Map<string, [number, number]>> => {
    const figures = new Map<string, [number, number]>();
    for (const name of histogramNames) {
      const [counts, sums] = await Promise.all([vector(prometheus, `histogram_count(${name})`), vector(prometheus, `histogram_sum(${name})`)]);
      for (const item of counts) figures.set(`${name} ${seriesKey(item.metric)}`, [Number(item.value?.[1]), Number.NaN]);
      for (const item of sums) {
        const entry = figures.get(`${name} ${seriesKey(item.metric)}`);
        if (entry !== undefined) entry[1] = Number(item.value?.[1]);
      }
    }
    return figures;
  };

  const textFigures = (): Map<string, [number, number]> => {
    const figures = new Map<string, [number, number]>();
    for (const [name, family] of classic) for (const [key, entry] of family) figures.set(`${name} ${key}`, [entry.count, entry.sum]);
    return figures;
  };

  it('has traffic in several histogram families to compare', () => {
    const observed = [...classic].filter(([, family]) => [...family.values()].some((entry) => entry.count > 0)).map(([name]) => name);
    expect(observed.length).toBeGreaterThanOrEqual(5);
    expect(histogramNames.length).toBeGreaterThanOrEqual(observed.length);
    expect(observed).toContain('hermes_tool_call_duration_seconds');
    expect(observed).toContain('hermes_api_request_duration_seconds');
  });

  it('stores every catalogue histogram as native series, with no _bucket series', async () => {
    for (const name of histogramNames) {
      const items = await vector(direct, name);
      expect(items.length, name).toBe(classic.get(name)?.size);
      expect(items.filter((item) => item.histogram === undefined || item.value !== undefined), name).toEqual([]);
    }
    expect(await vector(direct, 'count({__name__=~"hermes_.+_bucket"})')).toEqual([]);
  });

  it('keeps a bucket exemplar with each native series', async () => {
    // Prometheus 2.42 takes one exemplar per native histogram and scrape: that of the lowest bucket
    // holding one (later versions take every bucket's). The sidecar's OpenMetrics answer shows
    // each bucket's newest exemplar now; the first of each series is what the last scrape stored.
    const expected = new Set<string>();
    const seen = new Set<string>();
    for (const line of openMetrics.split('\n')) {
      const match = /^hermes_tool_call_duration_seconds_bucket\{(.*)\} \d+ # \{tool_call_id="([^"]+)"[^}]*\} (\S+) /.exec(line);
      if (match === null) continue;
      const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].filter((pair) => pair[1] !== 'le').map((pair) => [pair[1], pair[2]]));
      const key = seriesKey(labels as Record<string, string>);
      if (seen.has(key)) continue;
      seen.add(key);
      expected.add(`${key} ${match[2] ?? ''} ${Number(match[3])}`);
    }
    expect(expected.size).toBeGreaterThan(3);
    const answer = (await (
      // The traffic's clock runs ahead of the wall clock (its calls take simulated minutes): a wide window.
      await fetch(`${direct.url}/api/v1/query_exemplars?query=hermes_tool_call_duration_seconds&start=0&end=${Date.now() / 1000 + 30 * 86_400}`)
    ).json()) as { data: { seriesLabels: Record<string, string>; exemplars: { labels: Record<string, string>; value: string }[] }[] };
    const stored = new Set(
      answer.data.flatMap((entry) => entry.exemplars.map((exemplar) => `${seriesKey(entry.seriesLabels)} ${exemplar.labels.tool_call_id ?? ''} ${Number(exemplar.value)}`)),
    );
    expect([...expected].filter((exemplar) => !stored.has(exemplar))).toEqual([]);
    // Only exemplars the sidecar sent: content-free ids, never series labels.
    expect(answer.data.every((entry) => entry.exemplars.every((exemplar) => /^toolu_\d+$/.test(exemplar.labels.tool_call_id ?? '')))).toBe(true);
  });

  it('gives histogram_count and histogram_sum equal to the text _count and _sum, exactly', async () => {
    expect(await nativeFigures(direct)).toEqual(textFigures());
  });

  it('gives histogram_quantile within the bucket resolution of the classic quantile', async () => {
    const schemas = new Map<string, number>();
    for (const family of decoded) {
      for (const metric of family.metric) {
        if (metric.histogram !== undefined) {
          schemas.set(`${family.name} ${seriesKey(Object.fromEntries(metric.label.map((label) => [label.name, label.value])))}`, metric.histogram.schema);
        }
      }
    }
    const disagreements: string[] = [];
    let compared = 0;
    for (const name of histogramNames) {
      for (const q of QUANTILES) {
        for (const item of await vector(direct, `histogram_quantile(${q}, ${name})`)) {
          const key = seriesKey(item.metric);
          const expected = classicQuantile(q, classic.get(name)?.get(key)?.buckets ?? []);
          if (expected === undefined) continue;
          const native = Number(item.value?.[1]);
          const schema = schemas.get(`${name} ${key}`) ?? Number.NaN;
          const tolerance = native * relativeBucketWidth(schema) + expected.width;
          compared += 1;
          if (!(Math.abs(native - expected.value) <= tolerance)) {
            disagreements.push(`${name}${key} q=${q}: native ${native}, classic ${expected.value}, tolerance ${tolerance}`);
          }
        }
      }
    }
    expect(disagreements).toEqual([]);
    expect(compared).toBeGreaterThan(20);
  });

  it('delivers the same native series through an agent and remote_write to a central Prometheus', async () => {
    const expected = textFigures();
    let received = new Map<string, [number, number]>();
    // Remote write batches on its own schedule: wait (with a deadline) for the scrape after the traffic to arrive.
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(500)) {
      received = await nativeFigures(central);
      if (JSON.stringify([...received].sort()) === JSON.stringify([...expected].sort())) break;
    }
    expect(received).toEqual(expected);
    for (const name of histogramNames) {
      const items = await vector(central, name);
      expect(items.filter((item) => item.histogram === undefined), name).toEqual([]);
    }
    expect(await vector(central, 'count({__name__=~"hermes_.+_bucket"})')).toEqual([]);
  }, 60_000);

  it('evaluates the monitoring bundle built for native histograms, with data', async () => {
    const queries = nativeOnly(dashboardQueries(NATIVE_BUNDLE), dashboardQueries(CLASSIC_BUNDLE)).map(substituteVariables);
    const changedRules = nativeOnly(rules(NATIVE_BUNDLE), rules(CLASSIC_BUNDLE));
    const records = changedRules.flatMap((rule) => (rule.record === undefined ? [] : [rule.record]));
    expect(queries.length).toBeGreaterThan(20);
    expect(records.length).toBeGreaterThanOrEqual(3);
    expect(changedRules.some((rule) => rule.alert !== undefined)).toBe(true);
    expect([...queries, ...changedRules.map((rule) => rule.expr)].filter((expr) => /_bucket\b|\ble\b/.test(expr))).toEqual([]);
    const missing = async (): Promise<string[]> => {
      const empty: string[] = [];
      for (const expr of [...queries, ...records]) if ((await vector(direct, expr)).length === 0) empty.push(expr);
      return empty;
    };
    let empty = await missing();
    // Recording rules need an evaluation after the scrapes: waited for, with a deadline.
    for (const deadline = Date.now() + 30_000; empty.length > 0 && Date.now() < deadline; await sleep(1000)) empty = await missing();
    expect(empty).toEqual([]);
    const body = (await (await fetch(`${direct.url}/api/v1/rules`)).json()) as { data: { groups: { interval: number; rules: { name: string; health: string; lastError?: string }[] }[] } };
    // A group evaluated once a minute (the SLOs' long windows) may not have run yet: unknown, not broken.
    const unhealthy = body.data.groups.flatMap((group) =>
      group.rules.filter((rule) => rule.health !== 'ok' && !(rule.health === 'unknown' && group.interval >= 60)).map((rule) => `${rule.name}: ${rule.health} ${rule.lastError ?? ''}`),
    );
    expect(unhealthy).toEqual([]);
  }, 60_000);
});
