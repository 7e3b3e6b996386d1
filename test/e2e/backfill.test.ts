/**
 * `backfill` end to end: two Hermes homes' worth of session databases (the default profile at
 * schema 30, a profile at schema 23, Hermes' own table definitions), the real CLI (dist/main.js),
 * the real promtool making blocks, and a real Prometheus serving those blocks beside a live
 * scrape of the real sidecar. The history's totals in Prometheus equal the databases' own SQL
 * totals exactly; no content column reaches the output; the dashboard's History row shows both
 * sources.
 */
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendTraffic, TrafficModel } from '../../tools/traffic.js';
import { MAIN, startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { scratchDir } from '../support/scratch.js';
import { createStateDb, openMetricsFiles, readOpenMetrics, SENTINEL, STATE_DB_SCRIPT, type Rows, type StateTotals } from '../support/stateDb.js';
import { prometheus as prometheusTool, promtool as promtoolTool, python3 } from '../support/tools.js';

const prometheusBinary = prometheusTool();
const promtool = promtoolTool();
const python = python3();
const skipReason = prometheusBinary.skipReason ?? promtool.skipReason ?? python.skipReason;

/** The history ends a minute ago, on a whole second. */
const UNTIL = Math.floor(Date.now() / 1000) - 60;
const HOUR = 3600;

/** Costs are multiples of 1/64 USD, so every order of summing them is exact in binary floating point. */
function defaultProfileRows(u: number): Rows {
  return {
    sessions: [
      { id: 'd1', source: 'cli', started_at: u - 5 * HOUR + 0.25, ended_at: u - 4 * HOUR, end_reason: 'user_exit', tool_call_count: 3 },
      { id: 'd2', source: 'telegram', started_at: u - 3 * HOUR, ended_at: u - 2 * HOUR + 17, end_reason: 'compression', tool_call_count: 1 },
      { id: 'd3', source: 'cli', started_at: u - 90 * 60, ended_at: null, end_reason: null, tool_call_count: 0 },
    ],
    session_model_usage: [
      { session_id: 'd1', model: 'claude-sonnet-4', billing_provider: 'Anthropic', task: '', api_call_count: 4, input_tokens: 1200, output_tokens: 300, cache_read_tokens: 5000, cache_write_tokens: 700, reasoning_tokens: 40, estimated_cost_usd: 0.25, cost_status: 'estimated', first_seen: u - 5 * HOUR, last_seen: u - 4 * HOUR - 30 },
      { session_id: 'd1', model: 'gemini-flash', billing_provider: 'openrouter', task: 'title_generation', api_call_count: 1, input_tokens: 90, output_tokens: 12, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, estimated_cost_usd: 0.015625, cost_status: 'estimated', first_seen: u - 5 * HOUR, last_seen: u - 5 * HOUR + 20 },
      { session_id: 'd2', model: 'gpt-5', billing_provider: 'openai-codex', task: '', api_call_count: 2, input_tokens: 800, output_tokens: 100, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 60, estimated_cost_usd: 0, cost_status: 'included', first_seen: u - 3 * HOUR, last_seen: u - 2 * HOUR },
      { session_id: 'd3', model: 'claude-sonnet-4', billing_provider: 'anthropic', task: '', api_call_count: 3, input_tokens: 400, output_tokens: 90, cache_read_tokens: 2500, cache_write_tokens: 0, reasoning_tokens: 0, estimated_cost_usd: 0.5, cost_status: 'estimated', first_seen: u - 90 * 60, last_seen: u - 70 * 60 },
    ],
    messages: [
      { session_id: 'd1', role: 'user', timestamp: u - 5 * HOUR + 1, tool_name: null, finish_reason: null },
      { session_id: 'd1', role: 'assistant', timestamp: u - 5 * HOUR + 5, tool_name: null, finish_reason: 'tool_calls' },
      { session_id: 'd1', role: 'tool', timestamp: u - 5 * HOUR + 9, tool_name: 'terminal', finish_reason: null },
      { session_id: 'd1', role: 'assistant', timestamp: u - 4 * HOUR - 40, tool_name: null, finish_reason: 'stop' },
      { session_id: 'd2', role: 'tool', timestamp: u - 3 * HOUR + 60, tool_name: 'web_search', finish_reason: null },
      { session_id: 'd3', role: 'tool', timestamp: u - 80 * 60, tool_name: 'terminal', finish_reason: null },
    ],
  };
}

function workProfileRows(u: number): Rows {
  return {
    sessions: [{ id: 'w1', source: 'slack', started_at: u - 2 * HOUR, ended_at: u - HOUR, end_reason: 'session_reset', tool_call_count: 2 }],
    session_model_usage: [
      { session_id: 'w1', model: 'claude-sonnet-4', billing_provider: 'anthropic', task: '', api_call_count: 5, input_tokens: 3000, output_tokens: 800, cache_read_tokens: 12000, cache_write_tokens: 1500, reasoning_tokens: 0, estimated_cost_usd: 1.375, cost_status: 'estimated', first_seen: u - 2 * HOUR, last_seen: u - HOUR - 10 },
    ],
    messages: [
      { session_id: 'w1', role: 'tool', timestamp: u - 2 * HOUR + 30, tool_name: 'read_file', finish_reason: null },
      { session_id: 'w1', role: 'assistant', timestamp: u - HOUR - 20, tool_name: null, finish_reason: 'stop' },
    ],
  };
}

const run = promisify(execFile);

interface Vector {
  metric: Record<string, string>;
  value: [number, string];
}

describe.skipIf(skipReason !== undefined)(`backfill end to end${skipReason === undefined ? '' : ` (${skipReason})`}`, () => {
  const home = scratchDir('backfill-e2e-');
  const out = join(home, 'out');
  let totals: StateTotals[] = [];
  let cli: { stdout: string; stderr: string };
  let sidecar: SidecarProcess;
  let prometheus: RunningPrometheus;
  const traffic = new AbortController();
  let sending: Promise<void> = Promise.resolve();

  const vector = async (expr: string): Promise<Vector[]> => {
    const answer = await prometheus.query(expr);
    if (answer.status !== 'success') throw new Error(`${expr}: ${answer.error ?? 'error'}`);
    return answer.data?.result as Vector[];
  };
  /** One number: the sum over every history series, evaluated at the history's last sample. */
  const total = async (selector: string): Promise<number> => {
    // increase() extrapolates to the window's edges; here it does not: every series starts with a
    // 0 (a counter is never extrapolated below zero, so nothing is added before the first sample)
    // and has a sample at UNTIL, the moment `@` evaluates at (nothing to add after the last one),
    // so the result is exactly last − first. The 1d window holds the whole history.
    const result = await vector(`sum(increase(${selector}[1d] @ ${UNTIL}))`);
    return Number(result[0]?.value[1] ?? Number.NaN);
  };
  const sumOf = (pick: (t: StateTotals) => number) => totals.reduce((sum, t) => sum + pick(t), 0);

  beforeAll(async () => {
    mkdirSync(join(home, 'hermes', 'profiles', 'work'), { recursive: true });
    totals = [
      createStateDb(python.path ?? 'python3', join(home, 'hermes', 'state.db'), 30, defaultProfileRows(UNTIL)),
      createStateDb(python.path ?? 'python3', join(home, 'hermes', 'profiles', 'work', 'state.db'), 23, workProfileRows(UNTIL)),
    ];
    cli = await run(process.execPath, [MAIN, 'backfill', '--hermes-home', join(home, 'hermes'), '--until', String(UNTIL), '--out', out], {
      env: { PATH: process.env.PATH, HOME: home },
    });
    const data = join(home, 'prometheus-data');
    cpSync(join(out, 'blocks'), data, { recursive: true });
    // A price for the traffic's auxiliary model, so the live side has a cost series too.
    writeFileSync(join(home, 'config.yaml'), 'prices:\n  openrouter:\n    google/gemini-3.5-flash: {input: 0.3, output: 2.5}\n');
    sidecar = await startSidecarProcess([`--config.file=${join(home, 'config.yaml')}`]);
    sending = sendTraffic({ url: `${sidecar.ingest}/v1/events`, model: new TrafficModel({ seed: 23, agents: 2, errorRate: 0, faults: false }), rate: 200, batchSize: 20, signal: traffic.signal });
    prometheus = await startPrometheus(prometheusBinary.path ?? 'prometheus', new URL(sidecar.web).host, 1, 0, ['--storage.tsdb.retention.time=10y'], data);
    // Live rate() needs two scrapes of the traffic's series: waited for with a deadline.
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 250))) {
      if ((await vector('rate(hermes_tokens_total{source=""}[1m])')).length > 0) break;
    }
  }, 60_000);

  afterAll(async () => {
    traffic.abort();
    await sending;
    await prometheus?.stop();
    await sidecar?.stop();
  });

  it('reads both schema versions and says which it read', () => {
    expect(cli.stdout).toContain('Read profile "default" (database 1 of 2): Hermes schema 30.');
    expect(cli.stdout).toContain('Read profile "work" (database 2 of 2): Hermes schema 23.');
    expect(cli.stdout).toContain('cp -r');
    // Blocks copied as root stay root's; Prometheus, running as its own user, could not compact them.
    expect(cli.stdout).toContain(`chown -R --reference="$DATA" "$DATA/$(basename "$b")"`);
  });

  it('gives the databases\' own session totals, exactly', async () => {
    expect(await total('hermes_sessions_started_total{source="backfill"}')).toBe(sumOf((t) => t.sessions_started));
    expect(await total('hermes_history_sessions_ended_total{source="backfill"}')).toBe(sumOf((t) => t.sessions_ended));
    const byProfile = await vector(`sum by (profile) (increase(hermes_sessions_started_total{source="backfill"}[1d] @ ${UNTIL}))`);
    expect(Object.fromEntries(byProfile.map((v) => [v.metric.profile, Number(v.value[1])]))).toEqual({ default: totals[0]?.sessions_started, work: totals[1]?.sessions_started });
  });

  it('gives the databases\' own token totals by token type, exactly', async () => {
    for (const tokenType of ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const) {
      expect(await total(`hermes_tokens_total{source="backfill",token_type="${tokenType}"}`), tokenType).toBe(sumOf((t) => t.tokens[tokenType]));
    }
  });

  it('gives the databases\' own cost total, exactly, priced as the live metric prices it', async () => {
    expect(await total('hermes_cost_usd_total{source="backfill"}')).toBe(sumOf((t) => t.cost_usd));
    const pricing = await vector(`sum by (pricing) (increase(hermes_cost_usd_total{source="backfill"}[1d] @ ${UNTIL}))`);
    expect(Object.fromEntries(pricing.map((v) => [v.metric.pricing, Number(v.value[1])]))).toEqual({ hermes: sumOf((t) => t.cost_usd), included: 0 });
  });

  it('gives API calls, tool results and finish reasons as the databases count them', async () => {
    expect(await total('hermes_history_api_calls_total')).toBe(sumOf((t) => t.api_calls));
    expect(await total('hermes_history_tool_calls_total')).toBe(sumOf((t) => t.tool_messages));
    expect(await total('hermes_history_finish_reasons_total')).toBe(sumOf((t) => t.finish_reasons));
    const tools = await vector(`sum by (tool) (increase(hermes_history_tool_calls_total[1d] @ ${UNTIL}))`);
    expect(Object.fromEntries(tools.map((v) => [v.metric.tool, Number(v.value[1])]))).toEqual({ terminal: 2, web_search: 1, read_file: 1 });
  });

  it('labels the history as the live metrics are labelled (kind, lower-cased provider) plus source, profile, job and instance', async () => {
    const series = await vector(`hermes_tokens_total{source="backfill",token_type="input"} @ ${UNTIL}`);
    const providers = new Set(series.map((v) => v.metric.provider));
    expect(providers).toEqual(new Set(['anthropic', 'openrouter', 'openai-codex']));
    expect(new Set(series.map((v) => v.metric.kind))).toEqual(new Set(['main', 'auxiliary']));
    for (const { metric } of series) expect(metric).toMatchObject({ job: 'hermes-sidecar', instance: 'backfill', source: 'backfill' });
  });

  it('plants a sentinel in every content column of both databases (so the next test means something)', () => {
    const expected = { sessions: ['title', 'cwd', 'git_branch', 'git_repo_root', 'user_id', 'chat_id', 'display_name', 'origin_json', 'system_prompt', 'model_config'], messages: ['content', 'tool_calls', 'reasoning'] };
    for (const file of [join(home, 'hermes', 'state.db'), join(home, 'hermes', 'profiles', 'work', 'state.db')]) {
      const db = new Database(file, { readonly: true });
      try {
        for (const [table, columns] of Object.entries(expected)) {
          for (const column of columns) {
            const row = db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`).get(`${SENTINEL}${table}.${column}`) as { n: number };
            expect(row.n, `${table}.${column}`).toBeGreaterThan(0);
          }
        }
      } finally {
        db.close();
      }
    }
  });

  it('lets no content column reach the output or the process\'s output', () => {
    expect(readOpenMetrics(out)).not.toContain(SENTINEL);
    expect(cli.stdout).not.toContain(SENTINEL);
    expect(cli.stderr).not.toContain(SENTINEL);
  });

  it('shows history and live side by side in the overview dashboard\'s History row', async () => {
    interface Panel {
      type: string;
      title?: string;
      collapsed?: boolean;
      targets?: { expr?: string }[];
      panels?: Panel[];
    }
    const dashboard = JSON.parse(readFileSync(new URL('../../dashboards/hermes-agent-overview.json', import.meta.url), 'utf8')) as { panels: Panel[] };
    const rowIndex = dashboard.panels.findIndex((panel) => panel.type === 'row' && (panel.title ?? '').startsWith('History'));
    expect(rowIndex).toBeGreaterThan(-1);
    // A collapsed row holds its panels; an open one is followed by them.
    const row = dashboard.panels[rowIndex];
    const next = dashboard.panels.slice(rowIndex + 1).findIndex((panel) => panel.type === 'row');
    const panels = row?.collapsed === true ? (row.panels ?? []) : dashboard.panels.slice(rowIndex + 1, next === -1 ? undefined : rowIndex + 1 + next);
    expect(panels.length).toBeGreaterThan(0);
    const sourcesOf = async (expr: string): Promise<Set<string | undefined>> => {
      const params = new URLSearchParams({ query: expr, start: String(UNTIL - 6 * HOUR), end: String(Math.floor(Date.now() / 1000)), step: '15' });
      const answer = (await (await fetch(`${prometheus.url}/api/v1/query_range?${params.toString()}`)).json()) as { data: { result: { metric: Record<string, string> }[] } };
      return new Set(answer.data.result.map((series) => series.metric.source));
    };
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        const expr = (target.expr ?? '')
          .replaceAll('$__rate_interval', '1m')
          .replaceAll('$job', '.+')
          .replaceAll('$instance', '.+')
          .replaceAll('$provider', '.+')
          .replaceAll('$model', '.+');
    // A range query's steps fall every 15 s: the live side needs two scrapes before a step.
        let sources = await sourcesOf(expr);
        for (const deadline = Date.now() + 20_000; sources.size < 2 && Date.now() < deadline; sources = await sourcesOf(expr)) {
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        expect(sources, panel.title).toEqual(new Set(['backfill', 'live']));
      }
    }
  });
});

/** The last sample of each series named `name` in the window files, summed: the totals at --until. */
function lastTotal(files: readonly string[], name: string): number {
  const last = new Map<string, number>();
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.startsWith(`${name}{`)) continue;
      const cut = line.lastIndexOf('} ');
      last.set(line.slice(0, cut), Number(line.slice(cut + 2).split(' ')[0]));
    }
  }
  return [...last.values()].reduce((sum, value) => sum + value, 0);
}

describe.skipIf(python.path === undefined)(`backfill as a process, bounded${python.skipReason === undefined ? '' : ` (${python.skipReason})`}`, () => {
  it('builds a history far larger than a 40 MiB heap under that heap, with the database\'s own totals', async () => {
    // 200,000 messages over 60 days: the whole history's samples need several times 40 MiB of
    // heap; one window's do not.
    const dir = scratchDir('backfill-heap-');
    const db = join(dir, 'state.db');
    const made = await run(python.path ?? 'python3', [STATE_DB_SCRIPT, 'generate', '--schema', '30', '--db', db, '--sessions', '2000', '--messages', '200000', '--days', '60']);
    const totals = JSON.parse(made.stdout) as StateTotals;
    const out = join(dir, 'out');
    const ran = spawnSync(process.execPath, ['--max-old-space-size=40', MAIN, 'backfill', '--state-db', db, '--until', '1760000000', '--out', out], {
      env: { PATH: '', HOME: dir },
      encoding: 'utf8',
      timeout: 150_000,
    });
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
    expect(ran.stdout).toContain('136000 rows became 464 series, 346592 samples');
    const files = openMetricsFiles(out);
    expect(files).toHaveLength(11);
    expect(lastTotal(files, 'hermes_sessions_started_total')).toBe(totals.sessions_started);
    expect(lastTotal(files, 'hermes_history_tool_calls_total')).toBe(totals.tool_messages);
    expect(lastTotal(files, 'hermes_history_finish_reasons_total')).toBe(totals.finish_reasons);
  }, 240_000);

  it('refuses --out where the file system will not make a directory at once, instead of spinning (exit 2)', () => {
    const dir = scratchDir('backfill-proc-');
    createStateDb(python.path ?? 'python3', join(dir, 'state.db'), 30, { sessions: [{ id: 'a', source: 'cli', started_at: 1_700_000_000, ended_at: null, end_reason: null, tool_call_count: 0 }] });
    const ran = spawnSync(process.execPath, [MAIN, 'backfill', '--state-db', join(dir, 'state.db'), '--out', '/proc/hermes-backfill'], { env: { PATH: '', HOME: dir }, encoding: 'utf8', timeout: 60_000 });
    expect(ran.status).toBe(2);
    expect(ran.stderr).toMatch(/^backfill: --out \/proc\/hermes-backfill (cannot be created \(ENOENT at \/proc\/hermes-backfill\)|cannot be written by this user \(\/proc is not writable\))\.\n$/);
  }, 90_000);
});
