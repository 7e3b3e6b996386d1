#!/usr/bin/env node
/**
 * First step of `prepack`: stops `npm pack` before package.json is rewritten for the tarball when
 * the tarball could not be written where it was asked to go. npm writes the tarball after
 * `prepack` and skips `postpack` (which restores package.json) when that write fails, so checking
 * here keeps a failed pack from leaving the cleaned package.json in the working tree.
 * Only `npm pack` writes a file; a dry run and `npm publish` do not.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';

const { npm_command: command, npm_config_dry_run: dryRun, npm_config_pack_destination: destination, INIT_CWD: cwd } = process.env;

if (command === 'pack' && dryRun !== 'true') {
  // npm resolves --pack-destination against the directory it was started in (INIT_CWD).
  const directory = resolve(cwd ?? process.cwd(), destination ?? '.');
  try {
    if (!statSync(directory).isDirectory()) throw new Error('not a directory');
    accessSync(directory, constants.W_OK);
  } catch {
    console.error(`npm pack cannot write its tarball to ${directory}: it is not a writable directory (package.json is left unchanged).`);
    process.exit(1);
  }
}
