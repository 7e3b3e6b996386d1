/**
 * The build information gauge: declared and written by the composition root's one module that
 * knows the version, the revision and the runtime.
 */
import { REVISION, VERSION } from './version.js';
import type { Families } from './metrics/registry.js';
import { INFO, gauge, type Declarations } from './metrics/declare.js';
import { fed } from './metrics/fedBy.js';

/** The families this module writes (and all it is handed). */
export const BUILD_FAMILIES = {
  buildInfo: fed(gauge('hermes_sidecar_build_info', { version: INFO, revision: INFO, node_version: INFO }, 'self',
    'Build information: package version, git revision at build time and Node.js version; always 1.'),
    'sidecar', 'build'),
} as const satisfies Declarations;

/** Sets the build information series (always 1). */
export function recordBuildInfo(metrics: Families<typeof BUILD_FAMILIES>): void {
  metrics.buildInfo.set({ version: VERSION, revision: REVISION, node_version: process.version }, 1);
}
