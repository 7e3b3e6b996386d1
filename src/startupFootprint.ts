/**
 * Keeps what only the start of the sidecar would make resident out of its idle footprint. Imported
 * first by main.ts, so it runs before any other module is evaluated; `startupDone()` restores
 * V8's own settings once the listeners are up, so under load the sidecar runs exactly as it would
 * have.
 *
 * - The young generation stays at its initial size: loading the modules and building the
 *   catalogue allocate tens of megabytes that die at once; left alone, V8 grows the new space to
 *   its 32 MiB maximum on that burst and keeps it committed, about 8 MiB of idle RSS that no
 *   traffic asked for.
 * - TurboFan waits: loading some 400 modules makes about twenty of Node.js' own module-loader
 *   functions hot, and optimizing them pages in TurboFan's machine code from the node binary,
 *   about 4 MiB of RSS, for functions that never run again. Startup takes as long without it
 *   (median 260 ms to ready either way); the first hot code after startup brings it in.
 */
import { setFlagsFromString } from 'node:v8';

/** V8's default --semi-space-growth-factor (node --v8-options). */
const DEFAULT_GROWTH_FACTOR = 2;

setFlagsFromString('--semi-space-growth-factor=1');
setFlagsFromString('--no-turbofan');

export function startupDone(): void {
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  setFlagsFromString('--turbofan');
}
