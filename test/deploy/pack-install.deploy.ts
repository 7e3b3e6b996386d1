/**
 * The README's install path, for real: `npm pack` a clone, then `npm install -g` the tarball and
 * `npm install` it into a project with this machine's npm (11 on Node 20 here). The packed
 * package.json carries no scripts, so npm 11 prints no install-scripts warning about a `prepare`
 * that could not run without the sources, and the installed binary runs.
 *
 * The pack runs in a copy of the working tree committed to a scratch git repository, so the
 * test can assert with `git status` that packing leaves the tree as it found it, also when the
 * pack fails, without touching the real checkout (and without other suites seeing the cleaned
 * package.json while it exists). `node_modules` is the real one, linked.
 *
 * Installing resolves the tarball's dependency ranges afresh (a tarball carries no lockfile), so
 * it may pick versions newer than package-lock.json that no `npm ci` put in the cache:
 * `--prefer-offline` takes what the npm cache holds and asks the registry only for the rest.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { scratchDir } from '../support/scratch.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const NAME = 'hermes-prometheus-sidecar';
const repoManifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Record<string, unknown> & { version: string };
/** npm reads npm_config_* variables as settings: the outer `npm run` must not configure the npm under test. */
const env = { PATH: process.env.PATH, HOME: process.env.HOME };

interface Run {
  status: number | null;
  output: string;
}

function run(command: string, args: readonly string[], cwd: string): Run {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function git(clone: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=pack test', '-c', 'user.email=pack-test@example.invalid', ...args], {
    cwd: clone,
    encoding: 'utf8',
  });
}

/** The working tree's files (tracked and untracked, less ignored ones) in a fresh one-commit repository. */
function cloneWorkingTree(): string {
  const clone = join(scratchDir('sidecar-pack-'), NAME);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path.length > 0 && existsSync(join(REPO, path)));
  for (const path of files) {
    mkdirSync(dirname(join(clone, path)), { recursive: true });
    cpSync(join(REPO, path), join(clone, path));
  }
  symlinkSync(join(REPO, 'node_modules'), join(clone, 'node_modules'));
  git(clone, 'init', '-q');
  // `node_modules/` in .gitignore matches directories only, not this link.
  writeFileSync(join(clone, '.git/info/exclude'), 'node_modules\n');
  git(clone, 'add', '-A');
  git(clone, 'commit', '-q', '-m', 'working tree');
  return clone;
}

/** npm's warning lines, which installing the tarball must not print. */
const warnings = (output: string): string[] => output.split('\n').filter((line) => /^npm warn/i.test(line));

describe('the packed tarball', () => {
  let clone = '';
  let tarball = '';
  let packed: Run = { status: null, output: '' };
  let packedManifest: Record<string, unknown> = {};

  beforeAll(() => {
    clone = cloneWorkingTree();
    const out = scratchDir('sidecar-pack-out-');
    packed = run('npm', ['pack', '--pack-destination', out], clone);
    tarball = join(out, `${NAME}-${repoManifest.version}.tgz`);
    if (packed.status === 0) {
      packedManifest = JSON.parse(execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>;
    }
  });

  it('is built by `npm pack` (prepack builds dist/) and leaves the working tree unchanged', () => {
    expect(packed.status, packed.output).toBe(0);
    expect(readdirSync(dirname(tarball))).toEqual([`${NAME}-${repoManifest.version}.tgz`]);
    expect(git(clone, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(existsSync(join(clone, 'dist/main.js'))).toBe(true);
  });

  it('carries a package.json without scripts, with the bin, files, dependencies and engines of the repository', () => {
    expect(packedManifest.scripts).toBeUndefined();
    expect(packedManifest['clean-package']).toBeUndefined();
    for (const key of ['name', 'version', 'bin', 'files', 'dependencies', 'peerDependencies', 'peerDependenciesMeta', 'engines', 'type']) {
      expect(packedManifest[key], key).toEqual(repoManifest[key]);
    }
    // The repository keeps `prepare`, so `npm install` in a fresh clone still builds dist/.
    expect((repoManifest.scripts as Record<string, string>).prepare).toMatch(/tsc -p tsconfig\.build\.json/);
  });

  it('installs globally with no npm warning, and its binary runs', () => {
    const prefix = scratchDir('sidecar-pack-prefix-');
    // npm reads its global config from <prefix>/etc/npmrc: without this, a scratch prefix loses
    // the machine's settings (a cafile for a TLS-inspecting proxy, a registry mirror) that a
    // plain `npm install -g` has.
    const globalConfig = execFileSync('npm', ['config', 'get', 'globalconfig'], { env, encoding: 'utf8' }).trim();
    const installed = run('npm', ['install', '-g', '--prefix', prefix, '--globalconfig', globalConfig, '--prefer-offline', '--no-update-notifier', tarball], prefix);
    expect(installed.status, installed.output).toBe(0);
    expect(warnings(installed.output), installed.output).toEqual([]);
    const version = run(join(prefix, 'bin', NAME), ['--version'], prefix);
    expect(version.status, version.output).toBe(0);
    expect(version.output.split('\n')[0]).toBe(`${NAME} ${repoManifest.version} (revision ${git(clone, 'rev-parse', 'HEAD').trim()})`);
  });

  it('installs into a project with no npm warning, and its binary runs', () => {
    const project = scratchDir('sidecar-pack-project-');
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'uses-the-sidecar', version: '1.0.0', private: true })}\n`);
    const installed = run('npm', ['install', '--prefer-offline', '--no-update-notifier', tarball], project);
    expect(installed.status, installed.output).toBe(0);
    expect(warnings(installed.output), installed.output).toEqual([]);
    const version = run(join(project, 'node_modules/.bin', NAME), ['--version'], project);
    expect(version.status, version.output).toBe(0);
    expect(version.output).toMatch(new RegExp(`^${NAME} ${repoManifest.version.replaceAll('.', '\\.')} \\(revision [0-9a-f]{40}\\)\n`));
  });

  it('fails with one sentence and leaves package.json unchanged when the tarball cannot be written', () => {
    const missing = join(dirname(tarball), 'missing');
    const failed = run('npm', ['pack', '--pack-destination', missing], clone);
    expect(failed.status).not.toBe(0);
    expect(failed.output).toContain(`npm pack cannot write its tarball to ${missing}: it is not a writable directory (package.json is left unchanged).`);
    expect(git(clone, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });
});
