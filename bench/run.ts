/**
 * The benchmark suite (issue 6): measures, never optimizes.
 *
 *   npm run bench          # = npm run -s build && tsx bench/run.ts; rewrites bench/RESULTS.md
 *   npm run bench:smoke    # = tsx bench/run.ts --smoke; tiny sizes, asserts nothing about speed,
 *                          #   writes nothing (CI runs it through test/bench/smoke.test.ts)
 *
 * Sections (each prints one `[key] …` line):
 *   aggregation  in-process decode + dispatch vs JSON.parse alone and vs OpenTelemetry
 *   profile      the same path under node --cpu-prof, top self-time functions
 *   ingest       the real binary under autocannon, ~100 and ~500 events per request
 *   scrape       /metrics at 1k/5k/20k series, event-loop lag of a scrape under ingest load
 *   memory       RSS and heap per live series (fresh --expose-gc children)
 *   plugin       bench/plugin_callback.py's table, when present
 *   hostcpu      the plugin's whole-process CPU vs in-process prometheus_client (plugin_host_cpu.py)
 *   freshness    Python hook call → visible on /metrics (bench/freshness.py)
 *
 * Every ratio is measured side by side in the same run; absolute figures are printed too.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fmt, machine, MAIN, ROOT, table, type RunOptions, type SectionResult } from './lib.js';
import { aggregationSection, prepareStream } from './sections/aggregation.js';
import { freshnessSection } from './sections/freshness.js';
import { hostCpuSection } from './sections/hostcpu.js';
import { ingestSection } from './sections/ingest.js';
import { memorySection } from './sections/memory.js';
import { pluginSection } from './sections/plugin.js';
import { profileSection } from './sections/profile.js';
import { scrapeSection } from './sections/scrape.js';

const options: RunOptions = { smoke: process.argv.includes('--smoke') };
const RESULTS = `${ROOT}bench/RESULTS.md`;

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

const sections: SectionResult[] = [];
const failures: string[] = [];

async function section(key: string, title: string, run: () => Promise<SectionResult> | SectionResult): Promise<SectionResult | undefined> {
  const sectionStarted = Date.now();
  try {
    const result = await run();
    sections.push(result);
    log(`[${result.key}] ${result.summary} (${fmt((Date.now() - sectionStarted) / 1000, 1)} s)`);
    return result;
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    failures.push(key);
    sections.push({ key, title, summary: 'FAILED', markdown: `**Failed:**\n\n\`\`\`\n${message}\n\`\`\``, targets: [] });
    log(`[${key}] FAILED: ${message}`);
    return undefined;
  }
}

log(`hermes-prometheus-sidecar benchmarks${options.smoke ? ' (smoke: tiny sizes, no RESULTS.md)' : ''}`);
const stream = prepareStream(options);
await section('aggregation', '1. In-process aggregation', () => aggregationSection(options, stream));
await section('profile', 'Profile', () => profileSection(options, stream));
let idleRssBytes: number | undefined;
await section('ingest', '2. HTTP ingest end to end', async () => {
  const outcome = await ingestSection(options);
  idleRssBytes = outcome.idleRssBytes;
  return outcome.section;
});
await section('scrape', '3. Scrape', () => scrapeSection(options));
await section('memory', '4. Memory', () => memorySection(options, idleRssBytes));
await section('plugin', '5. Plugin side', () => pluginSection(options));
await section('hostcpu', '5b. Plugin host CPU', () => hostCpuSection(options));
await section('freshness', '6. Freshness', () => freshnessSection(options));

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
  const targets = sections.flatMap((result) => result.targets);
  const order = ['aggregation', 'ingest', 'scrape', 'memory', 'plugin', 'hostcpu', 'freshness', 'profile'];
  const ordered = [...sections].sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key));
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
      ['target', 'wanted', 'measured', 'verdict'],
      targets.map((target) => [target.name, target.target, target.measured, target.met ? 'met' : '**missed**']),
    ),
    '',
    ...ordered.flatMap((result) => [`## ${result.title}`, '', result.markdown, '']),
    // Written by hand between runs: what each optimization bought (kept next to the figures).
    readFileSync(new URL('./optimizations.md', import.meta.url), 'utf8'),
  ].join('\n');
}

if (!options.smoke) {
  writeFileSync(RESULTS, resultsMarkdown());
  log(`wrote ${RESULTS}`);
}
process.exit(failures.length === 0 ? 0 : 1);
