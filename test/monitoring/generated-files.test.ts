/**
 * The committed dashboards, rules and configuration files are exactly what monitoring/build.ts
 * produces: nobody edited generated output by hand, and nobody forgot to regenerate.
 */
import { describe, expect, it } from 'vitest';
import { build } from '../../monitoring/index.js';
import { readRepoFile } from './bundle.js';

describe('generated monitoring files', () => {
  const files = build();

  it.each(files.map((file) => [file.path, file] as const))(
    '%s equals a fresh build (run npm run monitoring:build)',
    (_path, file) => {
      expect(readRepoFile(file.path)).toBe(file.contents);
    },
  );

  it('builds the same bytes twice', () => {
    expect(build()).toEqual(files);
  });

  it('ends every file with exactly one newline', () => {
    for (const file of files) {
      expect(file.contents.endsWith('\n'), file.path).toBe(true);
      expect(file.contents.endsWith('\n\n'), file.path).toBe(false);
    }
  });
});
