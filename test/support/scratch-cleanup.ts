/** Vitest setup file: after each test file, remove the scratch directories it made (scratch.ts). */
import { afterAll } from 'vitest';
import { removeScratchDirs } from './scratch.js';

afterAll(() => {
  removeScratchDirs();
});
