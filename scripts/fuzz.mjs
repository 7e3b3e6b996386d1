#!/usr/bin/env node
// `npm run fuzz [-- SECONDS]`: the fast-check properties of test/properties.test.ts (ingest
// bodies in every shape, raw bytes, label values, webhook bodies, config files), each run for
// SECONDS (default 60) instead of the few seconds `npm test` gives them, and those of
// test/accounting.properties.test.ts (sequence accounting against its reference model), each
// over ACCOUNTING_RUNS random schedules (default 20,000) instead of 300.
import { spawnSync } from 'node:child_process';

const seconds = Number(process.argv[2] ?? process.env.FUZZ_SECONDS ?? 60);
if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error('usage: npm run fuzz -- [seconds per property]');
  process.exit(2);
}
console.log(`fuzzing each property for ${seconds} s`);
const result = spawnSync('npx', ['vitest', 'run', 'test/properties.test.ts', 'test/accounting.properties.test.ts', `--testTimeout=${(seconds + 600) * 1000}`], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_SECONDS: String(seconds), FUZZ_RUNS: '1000000000' },
});
process.exit(result.status ?? 1);
