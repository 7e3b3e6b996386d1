#!/usr/bin/env node
// `npm test`: type-check, lint (typescript-eslint, counted as one check), run the vitest suites
// and the Python plugin tests, lint the Python (pyflakes, one check), then print one closing line
// "tests: N passed, N failed, N skipped" over all of them. It says up front which suites will be skipped for a missing tool (under
// CI=true a missing tool fails instead).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { preflight } from './preflight.mjs';

const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
const run = (command, args, options = {}) => {
  console.log(`\n$ ${command} ${args.join(' ')}`);
  return spawnSync(command, args, { stdio: options.capture ? ['inherit', 'pipe', 'pipe'] : 'inherit', encoding: 'utf8' });
};

// Before anything runs: every skip for a missing tool is announced here, first.
const { pyflakesPython, announcement } = preflight();
if (announcement !== undefined) {
  if (process.env.CI === 'true') {
    console.error(`npm test: ${announcement}; under CI nothing may be skipped`);
    process.exit(1);
  }
  console.warn(`npm test: ${announcement}`);
}

let failed = false;
if (run('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']).status !== 0) failed = true;
if (failed) {
  console.error('tests: 0 passed, 1 failed (type-check failed)');
  process.exit(1);
}

// Lint runs whatever the outcome, so one run shows both lint problems and test failures.
const lintPassed = run('npx', ['eslint', '--max-warnings=0', '.']).status === 0;
if (!lintPassed) console.error('npm test: lint failed (the problems are listed above; `npm run lint` repeats them)');

mkdirSync('.tmp', { recursive: true });
const vitestReport = '.tmp/vitest-report.json';
rmSync(vitestReport, { force: true }); // a report left by an earlier run must not be counted
const vitest = run('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestReport}`]);
let passed = lintPassed ? 1 : 0;
let failures = lintPassed ? 0 : 1;
let skipped = 0;
if (existsSync(vitestReport)) {
  const report = JSON.parse(readFileSync(vitestReport, 'utf8'));
  passed += report.numPassedTests;
  failures += report.numFailedTests + (vitest.status !== 0 && report.numFailedTests === 0 ? 1 : 0);
  skipped += report.numPendingTests + report.numTodoTests;
} else if (vitest.status !== 0) {
  failures += 1;
}

if (has('python3')) {
  const python = run('python3', ['-m', 'unittest', 'discover', '-s', 'plugin/tests', '-t', '.', '-v'], { capture: true });
  process.stdout.write(python.stdout);
  process.stderr.write(python.stderr);
  const ran = Number(/Ran (\d+) tests?/.exec(python.stderr)?.[1] ?? 0);
  const count = (name) => Number(new RegExp(`${name}=(\\d+)`).exec(python.stderr)?.[1] ?? 0);
  const pyFailed = count('failures') + count('errors') + (python.status !== 0 && ran === 0 ? 1 : 0);
  const pySkipped = count('skipped');
  passed += ran - pyFailed - pySkipped;
  failures += pyFailed;
  skipped += pySkipped;
}

// Python lint (pyflakes, Debian's python3-pyflakes): the plugin, its tests and the Python benches.
// One counted check; missing pyflakes was announced first (a failure under CI) and counts as a skip.
if (pyflakesPython === undefined) {
  console.warn('npm test: python lint SKIPPED: pyflakes is not installed (apt-get install python3-pyflakes), as announced at the start');
  skipped += 1;
} else {
  const pythonFiles = ['plugin', ...readdirSync('bench').filter((name) => name.endsWith('.py')).map((name) => `bench/${name}`)];
  const lint = run(pyflakesPython, ['-m', 'pyflakes', ...pythonFiles]);
  if (lint.status === 0) {
    console.log('python lint (pyflakes): clean');
    passed += 1;
  } else {
    console.error('python lint (pyflakes): FAILED');
    failures += 1;
  }
}

console.log(`\ntests: ${passed} passed, ${failures} failed, ${skipped} skipped`);
process.exit(failures === 0 ? 0 : 1);
