import { defineConfig } from 'vitest/config';

/**
 * `npm run test:deploy`: the suites that build a container image and run a fleet of real
 * processes. They take minutes, so they stay out of `npm test`; `.ci/run` runs both.
 */
export default defineConfig({
  test: {
    include: ['test/deploy/**/*.deploy.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/scratch-cleanup.ts'],
    testTimeout: 5 * 60_000,
    hookTimeout: 20 * 60_000,
    // One suite at a time: each already keeps both cores busy.
    fileParallelism: false,
  },
});
