/**
 * Writes the monitoring bundle: dashboards, rules, prometheus.yml and Grafana provisioning.
 *
 *   npm run monitoring:build            regenerate the committed files
 *   npm run monitoring:build -- --check exit 1 if a committed file differs from a fresh build
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type GeneratedFile } from './files.js';
import { build } from './index.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function isUpToDate(file: GeneratedFile): boolean {
  return readOrUndefined(join(repoRoot, file.path)) === file.contents;
}

function write(file: GeneratedFile): void {
  const target = join(repoRoot, file.path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, file.contents);
}

function main(argv: readonly string[]): number {
  const files = build();
  if (argv.includes('--check')) {
    const stale = files.filter((file) => !isUpToDate(file));
    for (const file of stale) console.error(`out of date: ${file.path}`);
    if (stale.length > 0) console.error('run: npm run monitoring:build');
    return stale.length === 0 ? 0 : 1;
  }
  for (const file of files) {
    const status = isUpToDate(file) ? 'unchanged' : 'written';
    if (status === 'written') write(file);
    console.log(`${status.padEnd(9)} ${file.path}`);
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
