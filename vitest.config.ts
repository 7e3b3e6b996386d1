import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Removes each test file's scratch directories (test/support/scratch.ts) once it has run.
    setupFiles: ['test/support/scratch-cleanup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // End-to-end suites start real processes on loopback ports; two cores are all we have.
    maxWorkers: 2,
  },
});
