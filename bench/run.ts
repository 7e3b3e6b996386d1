/**
 * The benchmark suite (issue 6): measures, never optimizes.
 *
 *   npm run bench          # = npm run -s build && tsx bench/run.ts; rewrites bench/RESULTS.md
 *   npm run bench:smoke    # = tsx bench/run.ts --smoke; tiny sizes, asserts nothing about speed,
 *                          #   writes nothing (CI runs it through test/bench/smoke.test.ts)
 *   tsx bench/run.ts --only scrape,scrapeload   # some sections only; writes .tmp/bench-only.md
 *
 * Sections (each prints one `[key] …` line, then one `[key] target … → met|missed` line per target):
 *   aggregation  in-process decode + dispatch vs JSON.parse alone, vs OpenTelemetry and prom-client
 *                on equal work (checked sample by sample)
 *   profile      the same path under node --cpu-prof, top self-time functions
 *   ingest       the real binary under autocannon, ~100 and ~500 events per request
 *   scrape       /metrics at 1k/5k/20k/50k series against prom-client with the same families
 *   scrapeload   HTTP ingest at 20k series with and without a scrape every second
 *   memory       RSS and heap per live series (fresh --expose-gc children)
 *   plugin       bench/plugin_callback.py's table, when present
 *   hostcpu      the plugin's whole-process CPU vs in-process prometheus_client (plugin_host_cpu.py)
 *   freshness    Python hook call → visible on /metrics (bench/freshness.py)
 *   series       samples, series, bytes per scrape and RSS after the reference traffic, classic (text) against native (protobuf)
 *   worstcase    RSS at peak and steady with every cap filled by the widest valid series, every format
 *                scraped; honest posts after under the manifest's guard; gzip bombs against the budget
 *   backfill     `backfill` of a 10,000-session, 1,000,000-message session database, then promtool
 *
 * Every ratio is measured side by side in the same run; absolute figures are printed too, and
 * the load average at the start and end of each section. A section that throws (an equivalence
 * mismatch, an event a baseline threw on, a crash) fails the run with a non-zero exit; a missed
 * target is reported as missed and does not.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { ensureTmp, fmt, machine, MAIN, ROOT, table, type RunOptions, type SectionResult } from './lib.js';
import { aggregationSection, prepareStream } from './sections/aggregation.js';
import { backfillSection } from './sections/backfill.js';
import { freshnessSection } from './sections/freshness.js';
import { hostCpuSection } from './sections/hostcpu.js';
import { ingestSection } from './sections/ingest.js';
import { memorySection } from './sections/memory.js';
import { pluginSection } from './sections/plugin.js';
import { profileSection } from './sections/profile.js';
import { scrapeSection } from './sections/scrape.js';
import { scrapeLoadSection } from './sections/scrapeload.js';
import { seriesSection } from './sections/series.js';
import { worstCaseSection } from './sections/worstcase.js';

const options: RunOptions = { smoke: process.argv.includes('--smoke') };
const RESULTS = `${ROOT}bench/RESULTS.md`;
/** What `--only` writes instead: the same report, of those sections, outside the repository's files. */
const ONLY_RESULTS = `${ensureTmp()}bench-only.md`;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

const started = Date.now();
const startedAt = new Date();
const loadBefore = os.loadavg();
const codeUnderTest = gitState();

if (!existsSync(MAIN)) {
  log('dist/main.js is missing: building it (npx tsc -p tsconfig.build.json)');
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
}

interface Ran {
  readonly result: SectionResult;
  /** os.loadavg() (1/5/15 min) when the section started and ended. */
  readonly loadStart: number[];
  readonly loadEnd: number[];
  readonly seconds: number;
}

const ran: Ran[] = [];
const failures: string[] = [];
const loadText = (load: readonly number[]): string => load.map((value) => fmt(value, 2)).join(' / ');

/** `--only a,b`: just those sections (for working on one); RESULTS.md is then left alone. */
const onlyIndex = process.argv.indexOf('--only');
const only = onlyIndex === -1 ? undefined : new Set((process.argv[onlyIndex + 1] ?? '').split(','));

async function section(key: string, title: string, run: () => Promise<SectionResult> | SectionResult): Promise<SectionResult | undefined> {
  if (only !== undefined && !only.has(key)) return undefined;
  const sectionStarted = Date.now();
  const loadStart = os.loadavg();
  log(`[${key}] load average at start ${loadText(loadStart)}`);
  let result: SectionResult;
  let failed = false;
  try {
    result = await run();
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    failures.push(key);
    failed = true;
    log(`[${key}] FAILED: ${message}`);
    result = { key, title, summary: 'FAILED', markdown: `**Failed:**\n\n\`\`\`\n${message}\n\`\`\``, targets: [] };
  }
  const loadEnd = os.loadavg();
  const seconds = (Date.now() - sectionStarted) / 1000;
  ran.push({ result, loadStart, loadEnd, seconds });
  if (!failed) log(`[${result.key}] ${result.summary} (${fmt(seconds, 1)} s)`);
  if (!failed && result.targets.length === 0) log(`[${result.key}] target: none (informational: explains the figures of the sections with targets)`);
  for (const target of result.targets) {
    log(`[${result.key}] target: ${target.name}: wanted ${target.target}, measured ${target.measured} → ${target.met ? 'met' : 'MISSED'}`);
  }
  log(`[${key}] load average at end ${loadText(loadEnd)}`);
  return failed ? undefined : result;
}

log(`hermes-prometheus-sidecar benchmarks${options.smoke ? ' (smoke: tiny sizes, no RESULTS.md)' : ''}`);
const stream = prepareStream(options);
let idleRssBytes: number | undefined;
const measuredInProcess = async (): Promise<void> => {
  await section('aggregation', '1. In-process aggregation', () => aggregationSection(options, stream));
  await section('profile', 'Profile', () => profileSection(options, stream));
  await section('ingest', '2. HTTP ingest end to end', async () => {
    const outcome = await ingestSection(options);
    idleRssBytes = outcome.idleRssBytes;
    return outcome.section;
  });
  await section('memory', '5. Memory', () => memorySection(options, idleRssBytes));
};
const measuredOverHttp = async (): Promise<void> => {
  await section('scrape', '3. Scrape time against prom-client', () => scrapeSection(options));
  await section('scrapeload', '4. Ingest with and without a scrape every second', () => scrapeLoadSection(options));
  await section('freshness', '8. Freshness', () => freshnessSection(options));
  await section('series', '9. Series budget per host: classic against native histograms', () => seriesSection(options));
  await section('worstcase', '10. Memory at every cap (worst case of valid traffic)', () => worstCaseSection(options));
};
const measuredInPython = async (): Promise<void> => {
  await section('plugin', '6. Plugin side', () => pluginSection(options));
  await section('hostcpu', '7. Plugin host CPU', () => hostCpuSection(options));
  await section('backfill', '9. Backfill from the session database', () => backfillSection(options));
};
if (options.smoke) {
  // The smoke run measures nothing worth comparing, so its lanes overlap to keep it short.
  await Promise.all([measuredInProcess(), measuredOverHttp(), measuredInPython()]);
} else {
  await measuredInProcess();
  await measuredOverHttp();
  await measuredInPython();
}

const elapsed = (Date.now() - started) / 1000;
log(`done in ${fmt(elapsed, 1)} s${failures.length > 0 ? `; FAILED: ${failures.join(', ')}` : ''}`);

/** The commit under test, and whether src/ differs from it (others may be editing it). */
function gitState(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  try {
    const head = git('log', '-1', '--format=%h %s');
    const dirty = git('status', '--porcelain', '--', 'src').split('\n').filter((line) => line !== '');
    return `\`${head}\`${dirty.length === 0 ? ', src/ clean' : `, plus uncommitted changes in ${dirty.length} file(s) under src/ (${dirty.map((line) => line.slice(3)).join(', ')})`}`;
  } catch {
    return 'unknown (no git)';
  }
}

function resultsMarkdown(): string {
  const codeAtEnd = gitState();
  const info = machine();
  const loadAfter = os.loadavg();
  const args = process.argv.slice(2);
  const command =
    process.env.npm_lifecycle_event === 'bench' && process.env.npm_lifecycle_script !== undefined
      ? `npm run bench\` (\`${process.env.npm_lifecycle_script}`
      : `${process.env.npm_command === 'exec' ? 'npx ' : ''}tsx bench/run.ts${args.length > 0 ? ` ${args.join(' ')}` : ''}`;
  const order = ['aggregation', 'ingest', 'scrape', 'scrapeload', 'memory', 'plugin', 'hostcpu', 'freshness', 'series', 'worstcase', 'profile'];
  const ordered = [...ran].sort((a, b) => order.indexOf(a.result.key) - order.indexOf(b.result.key));
  return [
    '# Benchmark results',
    '',
    '<!-- Generated by bench/run.ts (`npm run bench`); do not edit by hand. -->',
    '',
    `- **Date:** ${startedAt.toISOString()}`,
    `- **Command:** \`${command}\`${command.startsWith('npm') ? ')' : ''} from the repository root (whole run ${fmt(elapsed, 0)} s, build not included)`,
    `- **Machine:** ${info.cpus} × ${info.cpuModel}${info.cpuMhz > 0 ? ` (${info.cpuMhz} MHz)` : ''} (\`os.cpus()\`), ${fmt(info.memoryGiB, 1)} GiB RAM (${fmt(info.freeMemoryGiB, 1)} GiB free at the end), ${info.os}`,
    `- **Runtime:** Node.js ${info.node} (V8 ${info.v8})`,
    `- **Code:** ${codeUnderTest} (at the start of the run)` +
      (codeAtEnd === codeUnderTest ? '' : `; **the code changed during the run**, at the end: ${codeAtEnd}`),
    `- **Load average** (1/5/15 min) at start ${loadBefore.map((value) => fmt(value, 2)).join(' / ')}, at end ${loadAfter.map((value) => fmt(value, 2)).join(' / ')}: ` +
      'other work on the machine shows up in absolute figures; ratios are measured side by side (same process, interleaved), which makes them steadier.',
    '',
    'Figures are this run\'s; machines are noisy, so compare ratios rather than absolute numbers across runs.',
    '',
    '## Targets',
    '',
    table(
      ['section', 'target', 'wanted', 'measured', 'verdict', 'load average at section start → end (1/5/15 min)'],
      ordered.flatMap(({ result, loadStart, loadEnd }) =>
        result.targets.map((target) => [result.key, target.name, target.target, target.measured, target.met ? 'met' : '**missed**', `${loadText(loadStart)} → ${loadText(loadEnd)}`]),
      ),
    ),
    '',
    ...ordered.flatMap(({ result, loadStart, loadEnd, seconds }) => [
      `## ${result.title}`,
      '',
      `*Load average (1/5/15 min) at the start ${loadText(loadStart)}, at the end ${loadText(loadEnd)}; ${fmt(seconds, 0)} s.*`,
      '',
      ...(result.targets.length === 0
        ? ['**Target:** none of its own (informational: it explains the figures of the sections with targets).', '']
        : [
            result.targets.map((target) => `**Target:** ${target.name} ${target.target} — measured ${target.measured}: **${target.met ? 'met' : 'missed'}**.`).join('\n\n'),
            '',
          ]),
      result.markdown,
      '',
    ]),
    // Written by hand between runs: what each optimization bought (kept next to the figures).
    readFileSync(new URL('./optimizations.md', import.meta.url), 'utf8'),
  ].join('\n');
}

if (!options.smoke && only === undefined) {
  writeFileSync(RESULTS, resultsMarkdown());
  log(`wrote ${RESULTS}`);
} else if (!options.smoke) {
  writeFileSync(ONLY_RESULTS, resultsMarkdown());
  log(`wrote ${ONLY_RESULTS}`);
}
process.exit(failures.length === 0 ? 0 : 1);
