/**
 * The package version (package.json) and the git revision it was built from (the REVISION file
 * scripts/revision.mjs writes at build time), each read once from the package root next to dist/
 * or src/. `--version` and hermes_sidecar_build_info both read them from here.
 */
import { readFileSync } from 'node:fs';

function readPackageFile(name: string): string | undefined {
  try {
    return readFileSync(new URL(`../${name}`, import.meta.url), 'utf8');
  } catch {
    return undefined;
  }
}

function readVersion(): string {
  const text = readPackageFile('package.json');
  if (text === undefined) return 'unknown';
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : 'unknown';
}

/** A hex commit id, or `unknown` when the build had no git checkout and no HERMES_SIDECAR_REVISION. */
function readRevision(): string {
  const revision = readPackageFile('REVISION')?.trim() ?? '';
  return /^[0-9a-f]{7,64}$/.test(revision) ? revision : 'unknown';
}

export const VERSION = readVersion();
export const REVISION = readRevision();

/** What `--version` prints. */
export const versionText = (): string => `hermes-prometheus-sidecar ${VERSION} (revision ${REVISION})\n  node ${process.version}\n`;
