#!/usr/bin/env node
// `npm run test:deploy`: the container image and fleet suites (vitest.deploy.config.ts), with the
// same closing line as `npm test`: "tests: N passed, N failed, N skipped", and the time they took.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const started = Date.now();
mkdirSync('.tmp', { recursive: true });
const report = '.tmp/vitest-deploy-report.json';
rmSync(report, { force: true });
const args = ['vitest', 'run', '--config', 'vitest.deploy.config.ts', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`];
console.log(`\n$ npx ${args.join(' ')}`);
const vitest = spawnSync('npx', args, { stdio: 'inherit' });

let passed = 0;
let failed = vitest.status === 0 ? 0 : 1;
let skipped = 0;
if (existsSync(report)) {
  const result = JSON.parse(readFileSync(report, 'utf8'));
  passed = result.numPassedTests;
  failed = result.numFailedTests + (vitest.status !== 0 && result.numFailedTests === 0 ? 1 : 0);
  skipped = result.numPendingTests + result.numTodoTests;
}
console.log(`\ntest:deploy took ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
