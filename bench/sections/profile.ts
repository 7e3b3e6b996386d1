/**
 * Profile: the in-process aggregation (decode + apply, the sidecar's path only) once under
 * `node --cpu-prof`, the .cpuprofile written to .tmp/cpuprofile/, summarised by self time.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { fmt, fmtInt, ROOT, runChild, table, TMP, type RunOptions, type SectionResult } from '../lib.js';
import type { Stream } from './aggregation.js';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: number[];
}

interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

export interface ProfileEntry {
  readonly name: string;
  readonly location: string;
  readonly selfMs: number;
  readonly share: number;
}

const sourceMaps = new Map<string, SourceMap | undefined>();

/** dist/*.js positions back to src/*.ts through tsc's source maps. */
function original(frame: CallFrame): { url: string; line: number } {
  const fallback = { url: frame.url, line: frame.lineNumber };
  if (!frame.url.startsWith(`file://${ROOT}dist/`)) return fallback;
  const file = fileURLToPath(frame.url);
  if (!sourceMaps.has(file)) {
    sourceMaps.set(file, existsSync(`${file}.map`) ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as never) : undefined);
  }
  const entry: { originalSource?: string; originalLine?: number } | undefined = sourceMaps.get(file)?.findEntry(frame.lineNumber, frame.columnNumber);
  if (entry?.originalSource === undefined || entry.originalLine === undefined) return fallback;
  const source = entry.originalSource.startsWith('file://') ? entry.originalSource : new URL(entry.originalSource, frame.url).href;
  return { url: source, line: entry.originalLine };
}

function location(frame: CallFrame): string {
  if (frame.url === '') return '';
  const { url: mapped, line } = original(frame);
  let url = mapped.replace(`file://${ROOT}`, '');
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) url = url.slice(modules + 'node_modules/'.length);
  // TypeScript run through tsx: V8's lines are those of the transformed code, not of the file.
  if (frame.url.endsWith('.ts') && frame.url.startsWith('file://')) return url;
  return `${url}:${line + 1}`;
}

function moduleOf(frame: CallFrame): string {
  if (frame.url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native / V8 builtins)';
  const url = frame.url.replace(`file://${ROOT}`, '');
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const [scope = '', name = ''] = url.slice(modules + 'node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  if (url.startsWith('node:')) return 'node: internals';
  return original(frame).url.replace(`file://${ROOT}`, '');
}

/**
 * Self time per function (and per module) from a V8 .cpuprofile, idle excluded. With `within`,
 * only the samples from the first to the last one under a function of that name count
 * (garbage collection in between included): process start-up and set-up stay out.
 */
export function summarise(
  profile: CpuProfile,
  within?: string,
): { total: number; functions: ProfileEntry[]; modules: ProfileEntry[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inside = (id: number): boolean => {
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      if (byId.get(current)?.callFrame.functionName === within) return true;
    }
    return false;
  };
  let first = 0;
  let last = profile.samples.length - 1;
  if (within !== undefined) {
    first = profile.samples.findIndex(inside);
    last = profile.samples.findLastIndex(inside);
    if (first === -1) throw new Error(`no sample under ${within}`);
  }
  const selfByFunction = new Map<string, { frame: CallFrame; us: number }>();
  const selfByModule = new Map<string, number>();
  let total = 0;
  for (let index = first; index <= last; index += 1) {
    const frame = byId.get(profile.samples[index] ?? -1)?.callFrame;
    const us = profile.timeDeltas[index + 1] ?? profile.timeDeltas[index] ?? 0;
    if (frame === undefined || frame.functionName === '(idle)') continue;
    total += us;
    const key = `${frame.functionName}|${frame.url}|${frame.lineNumber}|${frame.columnNumber}`;
    const entry = selfByFunction.get(key) ?? { frame, us: 0 };
    entry.us += us;
    selfByFunction.set(key, entry);
    const module = moduleOf(frame);
    selfByModule.set(module, (selfByModule.get(module) ?? 0) + us);
  }
  const functions = [...selfByFunction.values()]
    .sort((a, b) => b.us - a.us)
    .map(({ frame, us }) => ({
      name: frame.functionName === '' ? '(anonymous)' : frame.functionName,
      location: location(frame),
      selfMs: us / 1000,
      share: us / total,
    }));
  const modules = [...selfByModule.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => ({ name, location: '', selfMs: us / 1000, share: us / total }));
  return { total: total / 1000, functions, modules };
}

export async function profileSection(options: RunOptions, stream: Stream): Promise<SectionResult> {
  const dir = `${TMP}cpuprofile/`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rounds = options.smoke ? 1 : 2;
  await runChild('children/aggregation.ts', ['--file', stream.file, '--batch', String(stream.batch), '--profile', String(rounds)], {
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  });
  // The loader thread of tsx may write its own profile: the main thread's is the largest.
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => ({ name, size: statSync(`${dir}${name}`).size }))
    .sort((a, b) => b.size - a.size);
  const file = files[0];
  if (file === undefined) throw new Error(`no .cpuprofile written to ${dir}`);
  const profile = JSON.parse(readFileSync(`${dir}${file.name}`, 'utf8')) as CpuProfile;
  const { total, functions, modules } = summarise(profile, 'profiledWorkload');
  const top = functions.slice(0, 10);
  const group = (name: string): string => {
    if (name === 'prom-client') return 'prom-client';
    if (name === '(garbage collector)') return 'garbage collection';
    if (name.startsWith('src/contract/') || name === 'node: internals') return 'decoding (bytes → strings, JSON.parse, normalize)';
    if (name.startsWith('src/')) return 'sidecar recorders, label guard, series sets, dispatcher';
    return 'other (V8 builtins, bench loop, program)';
  };
  const groups = new Map<string, number>();
  for (const entry of modules) groups.set(group(entry.name), (groups.get(group(entry.name)) ?? 0) + entry.selfMs);
  const grouped = [...groups.entries()].sort((a, b) => b[1] - a[1]);
  const internal = functions.find((entry) => entry.location.startsWith('node:'));
  const groupLine =
    `Grouped: ${grouped.map(([name, ms]) => `${name} ${fmt((ms / total) * 100, 0)}%`).join('; ')}. ` +
    (internal === undefined ? '' : `The largest \`node: internals\` entry is \`${internal.name}\` at \`${internal.location}\` (${fmt(internal.share * 100, 1)}%), i.e. \`Buffer#toString\` of the request bytes in \`decodeBody\`. `) +
    '`JSON.parse` is a builtin: its time counts as self time of `parseJson`.';
  const markdown = [
    `\`node --cpu-prof --import tsx bench/children/aggregation.ts --profile ${rounds}\`: ${rounds} rounds of the "ours" variant of section 1 ` +
      `(decodeBody + dispatcher.applyBatch on a fresh sidecar, ${fmtInt(stream.events)} events, batches of ${stream.batch}) on the compiled \`dist/\` modules, ` +
      `positions mapped back to \`src/\` through tsc's source maps. Profile \`.tmp/cpuprofile/${file.name}\`; only the samples from the first to the last one ` +
      `inside the workload count (${fmt(total, 0)} ms, garbage collection included; start-up and reading the stream excluded). Self time, top 10 functions:`,
    '',
    table(
      ['#', 'function', 'where', 'self ms', 'share'],
      top.map((entry, index) => [String(index + 1), `\`${entry.name}\``, entry.location === '' ? '—' : `\`${entry.location}\``, fmt(entry.selfMs, 0), `${fmt(entry.share * 100, 1)}%`]),
      ['r', 'l', 'l', 'r', 'r'],
    ),
    '',
    'Self time by module (where the time goes, whichever function):',
    '',
    table(
      ['module', 'self ms', 'share'],
      modules.slice(0, 12).map((entry) => [`\`${entry.name}\``, fmt(entry.selfMs, 0), `${fmt(entry.share * 100, 1)}%`]),
    ),
    '',
    groupLine,
  ].join('\n');
  const head = top
    .slice(0, 3)
    .map((entry) => `${entry.name} ${fmt(entry.share * 100, 1)}%`)
    .join(', ');
  return { key: 'profile', title: 'Profile', summary: `top self time: ${head}`, markdown, targets: [] };
}

/** Top functions and modules by self time of a whole .cpuprofile (a window the child chose). */
export function describeProfile(path: string): { markdown: string; head: string; totalMs: number } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const { total, functions, modules } = summarise(profile);
  const markdown = [
    table(
      ['#', 'function', 'where', 'self ms', 'share'],
      functions
        .slice(0, 10)
        .map((entry, index) => [String(index + 1), `\`${entry.name}\``, entry.location === '' ? '—' : `\`${entry.location}\``, fmt(entry.selfMs, 0), `${fmt(entry.share * 100, 1)}%`]),
      ['r', 'l', 'l', 'r', 'r'],
    ),
    '',
    table(
      ['module', 'self ms', 'share'],
      modules.slice(0, 8).map((entry) => [`\`${entry.name}\``, fmt(entry.selfMs, 0), `${fmt(entry.share * 100, 1)}%`]),
    ),
  ].join('\n');
  const head = functions
    .slice(0, 3)
    .map((entry) => `${entry.name} ${fmt(entry.share * 100, 1)}%`)
    .join(', ');
  return { markdown, head, totalMs: total };
}
