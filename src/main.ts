#!/usr/bin/env node
/**
 * The binary. It applies the startup footprint settings first (startupFootprint.ts) and only then
 * loads the sidecar: a static import would have every module parsed, and its garbage made, before
 * any code runs.
 */
import './startupFootprint.js';

await import('./lifecycle.js');
