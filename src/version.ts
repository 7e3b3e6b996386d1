/** The package version, read once from package.json next to dist/ or src/. */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const VERSION = readVersion();
