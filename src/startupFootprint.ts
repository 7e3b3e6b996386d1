/**
 * Keeps what only the start of the sidecar, or only a busy one, would make resident out of its
 * idle footprint. Imported first by main.ts, so it runs before any other module is evaluated.
 * The sidecar keeps these settings while it is idle (`restoreWhenBusy()`), and V8's own come back
 * for good the first second it has work (whenBusy.ts): under load it runs exactly as it would
 * have. Subcommands, one-off work, get V8's own settings at once (`startupDone()`).
 *
 * - The young generation stays at its initial size: loading the modules and building the
 *   catalogue allocate tens of megabytes that die at once; left alone, V8 grows the new space to
 *   its 32 MiB maximum on that burst and keeps it committed, about 8 MiB of idle RSS that no
 *   traffic asked for. Once V8's growth is back, the garbage of the first scrapes alone doubles
 *   it (2 MiB more).
 * - TurboFan waits: loading some 400 modules makes about twenty of Node.js' own module-loader
 *   functions hot, and optimizing them pages in TurboFan's machine code from the node binary,
 *   about 4 MiB of RSS, for functions that never run again. Startup takes as long without it
 *   (median 260 ms to ready either way). The render of an idle sidecar's few hundred series is
 *   too small for optimized code to pay: twenty scrapes cost the same CPU with and without
 *   TurboFan, which would page in the same 4 MiB to optimize them.
 */
import { setFlagsFromString } from 'node:v8';
import { whenBusy } from './whenBusy.js';

/** V8's default --semi-space-growth-factor (node --v8-options). */
const DEFAULT_GROWTH_FACTOR = 2;

setFlagsFromString('--semi-space-growth-factor=1');
setFlagsFromString('--no-turbofan');

/** V8's own settings, now. */
export function startupDone(): void {
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  setFlagsFromString('--turbofan');
}

/**
 * V8's own settings once the process has work (whenBusy.ts); `restored` is called then. Returns
 * what stops watching.
 */
export function restoreWhenBusy(restored: () => void): () => void {
  return whenBusy(() => {
    startupDone();
    restored();
  });
}
