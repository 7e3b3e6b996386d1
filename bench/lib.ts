/**
 * Shared pieces of the benchmark suite: the machine description, statistics and formatting,
 * the real sidecar binary as a child process, tsx child processes that report one JSON result,
 * exposition parsing, and the synthetic high-cardinality traffic that creates live series.
 */
import { startSidecarProcess } from '../test/support/process.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { TrafficModel, type Line } from '../tools/traffic.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
export const TMP = fileURLToPath(new URL('../.tmp/', import.meta.url));
export const RESULT_PREFIX = 'BENCH_RESULT ';

export function ensureTmp(): string {
  mkdirSync(TMP, { recursive: true });
  return TMP;
}

// ---------------------------------------------------------------------------------- machine

export interface Machine {
  readonly cpuModel: string;
  readonly cpus: number;
  readonly cpuMhz: number;
  readonly memoryGiB: number;
  readonly freeMemoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly v8: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpus: cpus.length,
    cpuMhz: cpus[0]?.speed ?? 0,
    memoryGiB: os.totalmem() / 2 ** 30,
    freeMemoryGiB: os.freemem() / 2 ** 30,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
  };
}

// ---------------------------------------------------------------------------------- statistics

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function nowMs(): number {
  return performance.now();
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------- formatting

export function fmtInt(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : String(value);
}

export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export const fmtMiB = (bytes: number): string => `${fmt(bytes / 2 ** 20, 1)} MiB`;
export const fmtRatio = (ratio: number): string => `${fmt(ratio, 2)}×`;

export function table(header: readonly string[], rows: readonly (readonly string[])[], align?: readonly ('l' | 'r')[]): string {
  const rule = header.map((_, index) => ((align?.[index] ?? (index === 0 ? 'l' : 'r')) === 'r' ? '---:' : '---'));
  return [header, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

export function verdict(met: boolean): string {
  return met ? '**met**' : '**missed**';
}

// ---------------------------------------------------------------------------------- children

const running = new Set<ChildProcess>();

/** Children are ended with the runner, however it ends (a closed pipe, Ctrl-C, an exception). */
export function track<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

function killRunning(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
process.once('exit', killRunning);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killRunning();
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------------- the binary

/** What the sections need of a running sidecar (the binary, or the scrape section's child). */
export interface SidecarProcess {
  readonly child: ChildProcess;
  readonly web: string;
  readonly ingest: string;
  stop(): Promise<number | null>;
}

/** `node dist/main.js` on free loopback ports (the tests' launcher), killed if the runner dies. */
export async function startSidecarBinary(args: readonly string[] = []): Promise<SidecarProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" first`);
  const sidecar = await startSidecarProcess([...args]);
  track(sidecar.child);
  return sidecar;
}

// ---------------------------------------------------------------------------------- tsx children

export interface ChildOptions {
  readonly nodeFlags?: readonly string[];
  readonly ipc?: boolean;
}

/** `node [flags] --import tsx bench/<script> [args]`, with the repository as cwd. */
export function spawnTsx(script: string, args: readonly string[], options: ChildOptions = {}): ChildProcess {
  return track(
    spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', `bench/${script}`, ...args], {
      cwd: ROOT,
      env: process.env,
      stdio: options.ipc === true ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** Runs a child that prints one `BENCH_RESULT <json>` line and exits 0; returns the JSON. */
export async function runChild<T>(script: string, args: readonly string[], options: ChildOptions = {}): Promise<T> {
  const { status, stdout, stderr } = await outcomeOf(spawnTsx(script, args, options));
  const line = stdout.split('\n').find((text) => text.startsWith(RESULT_PREFIX));
  if (status !== 0 || line === undefined) throw new Error(`bench/${script} exited with ${status}:\n${stderr}\n${stdout}`);
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as T;
}

export interface ProcessOutcome {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The child's exit status (null when it could not run) and everything it printed, once it has ended. */
function outcomeOf(child: ChildProcess): Promise<ProcessOutcome> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ status: null, stdout, stderr: `${stderr}${error.message}` }));
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs a program to its end without blocking the runner's event loop (other sections may be running). */
export async function runProcess(command: string, args: readonly string[], timeoutMs = 600_000): Promise<ProcessOutcome> {
  const child = track(spawn(command, [...args], { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    return await outcomeOf(child);
  } finally {
    clearTimeout(timer);
  }
}

/** The child side of runChild. */
export function reportResult(result: unknown): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

// ---------------------------------------------------------------------------------- exposition

/** Sum of the samples of one metric name (exact name, any labels) whose labels contain `filter`. */
export function sumSamples(text: string, name: string, filter = ''): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const next = line.charAt(name.length);
    if (next !== '{' && next !== ' ') continue;
    if (filter !== '' && !line.includes(filter)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) total += value;
  }
  return total;
}

export interface Fetched {
  readonly ms: number;
  readonly status: number;
  /** Bytes on the wire (compressed when the server compressed). */
  readonly bytes: number;
  readonly contentType: string;
  readonly contentEncoding: string;
}

/**
 * GET with `node:http` (no decompression, no body kept): the wall time until the last byte
 * arrived, and the size as sent.
 */
export function timedGet(url: string, headers: Readonly<Record<string, string>> = {}): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const started = nowMs();
    const request = httpGet(url, { headers, agent: false }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      response.once('end', () =>
        resolve({
          ms: nowMs() - started,
          status: response.statusCode ?? 0,
          bytes,
          contentType: String(response.headers['content-type'] ?? ''),
          contentEncoding: String(response.headers['content-encoding'] ?? 'identity'),
        }),
      );
      response.once('error', reject);
    });
    request.once('error', reject);
    request.setTimeout(60_000, () => request.destroy(new Error(`GET ${url} timed out`)));
  });
}

/** The headers Prometheus 2.x/3.x sends on every scrape (it asks for gzip). */
export const PROMETHEUS_SCRAPE_HEADERS: Readonly<Record<string, string>> = {
  accept: 'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
  'accept-encoding': 'gzip',
};

export async function scrape(web: string): Promise<string> {
  const response = await fetch(`${web}/metrics`);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return text;
}

// ---------------------------------------------------------------------------------- traffic

export const ndjson = (lines: readonly Line[]): string => lines.map((line) => JSON.stringify(line)).join('\n');

/**
 * Label caps, the global series cap and the series byte budget raised so that distinct tools
 * and models all become series: nothing folds into `other`.
 */
export function writeCapsConfig(): string {
  const file = `${ensureTmp()}bench-caps.yaml`;
  writeFileSync(file, 'labels:\n  tool: {cap: 100000}\n  model: {cap: 100000}\nmetrics:\n  max_series: 1000000\n  max_series_bytes: 0\n');
  return file;
}

/**
 * Envelope lines that create new live agent series: a distinct tool name (pre + post: in-flight
 * gauge, calls counter, duration histogram = 3 series) or a distinct model (post_api_request with
 * usage and first chunk: requests, duration, time to first chunk, finish reason, 5 token types,
 * prompt-token histogram = 10 series), alternating: about a quarter of the new series are tool
 * series and three quarters model series. `index` makes the values unique; `tag` keeps separate runs apart.
 */
export function seriesLines(index: number, tag: string): Line[] {
  if (index % 2 === 0) {
    const fields = { tool_name: `${tag}_tool_${index}`, tool_call_id: `${tag}_call_${index}`, session_id: 'bench' };
    return [
      { event: 'pre_tool_call', data: fields },
      { event: 'post_tool_call', data: { ...fields, duration_ms: 12, status: 'ok' } },
    ];
  }
  const startedAt = 1_800_000_000;
  return [
    {
      event: 'post_api_request',
      data: {
        session_id: 'bench',
        api_request_id: `${tag}_req_${index}`,
        provider: 'openrouter',
        model: `${tag}/model-${index}`,
        api_duration: 1.5,
        started_at: startedAt,
        first_chunk_at: startedAt + 0.4,
        finish_reason: 'stop',
        usage: { input_tokens: 100, cache_read_tokens: 10, cache_write_tokens: 5, output_tokens: 50, reasoning_tokens: 5, prompt_tokens: 115 },
      },
    },
  ];
}

export interface Body {
  readonly body: string;
  readonly events: number;
}

/**
 * Distinct NDJSON request bodies of whole generated turns (about `batch` events each; faults
 * off). Lines keep their plugin `instance` but drop `seq`, so cycling through the bodies again
 * and again is never deduplicated (the sidecar tracks the instance without a sequence check).
 */
export function trafficBodies(count: number, batch: number, seed: number): Body[] {
  const model = new TrafficModel({ seed, agents: 8, errorRate: 0.05, faults: false });
  return Array.from({ length: count }, () => {
    const lines = model.batch(batch).map(({ seq: _seq, ...line }) => line);
    return { body: ndjson(lines), events: lines.length };
  });
}

// ---------------------------------------------------------------------------------- sections

export interface RunOptions {
  /** Tiny sizes, no RESULTS.md, no assertion about speed. */
  readonly smoke: boolean;
}

export interface Target {
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

export interface SectionResult {
  /** Printed as `[key] summary`; the smoke test looks for one such line per section. */
  readonly key: string;
  readonly title: string;
  readonly summary: string;
  /** The section's body in RESULTS.md. */
  readonly markdown: string;
  readonly targets: readonly Target[];
}
