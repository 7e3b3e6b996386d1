/**
 * Enabling the bridge plugin in a Hermes config.yaml: the entry is inserted as text so every
 * other byte stays, a layout the insertion does not handle is re-rendered from the document, a
 * file that is not a config it can edit is refused with a message naming the place, and the file
 * is replaced through a temporary sibling that never outlives a failure.
 */
import { chmod, lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { planConfigEdit, PLUGIN_NAME, writeConfig } from '../../src/cli/hermesConfig.js';
import { InstallError } from '../../src/cli/installError.js';
import { scratchDir } from '../support/scratch.js';

async function planFor(text: string | undefined) {
  const home = scratchDir('hermes-config-');
  if (text !== undefined) await writeFile(path.join(home, 'config.yaml'), text);
  return planConfigEdit(home);
}

describe('planConfigEdit', () => {
  it('creates a config listing only the plugin when there is none', async () => {
    const plan = await planFor(undefined);
    expect(plan).toMatchObject({ text: `plugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`, created: true, deniedToo: false });
    expect(path.basename(plan.file)).toBe('config.yaml');
  });

  it.each([
    ['an empty file', '', `plugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`],
    ['a file without plugins', 'model: x  # chosen\n', `model: x  # chosen\nplugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`],
    ['an empty plugins key', 'plugins:\nmodel: x\n', `plugins:\n  enabled:\n    - ${PLUGIN_NAME}\nmodel: x\n`],
    ['plugins with other settings', 'plugins:\n  dir: /p\nmodel: x\n', `plugins:\n  dir: /p\n  enabled:\n    - ${PLUGIN_NAME}\nmodel: x\n`],
    ['an empty enabled list', 'plugins:\n  enabled:\n', `plugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`],
    ['a flow list', 'plugins:\n  enabled: [a, "b"]   # two\n', `plugins:\n  enabled: [a, "b", ${PLUGIN_NAME}]   # two\n`],
    ['an empty flow list', 'plugins:\n  enabled: []\n', `plugins:\n  enabled: [${PLUGIN_NAME}]\n`],
    ['a block list level with its key', 'plugins:\n  enabled:\n  - a   # first\n', `plugins:\n  enabled:\n  - a   # first\n  - ${PLUGIN_NAME}\n`],
    ['Windows line endings', 'plugins:\r\n  enabled:\r\n    - a\r\n', `plugins:\r\n  enabled:\r\n    - a\r\n    - ${PLUGIN_NAME}\r\n`],
  ])('inserts the entry into %s, keeping every other byte', async (_layout, before, after) => {
    const plan = await planFor(before);
    expect(plan.text).toBe(after);
    expect(plan.created).toBe(false);
    expect((parse(plan.text ?? '') as { plugins: { enabled: string[] } }).plugins.enabled).toContain(PLUGIN_NAME);
  });

  it('re-renders a layout the insertion does not handle, with the same content', async () => {
    const plan = await planFor('{plugins: {enabled: [a]}, model: x}\n');
    expect(parse(plan.text ?? '')).toEqual({ plugins: { enabled: ['a', PLUGIN_NAME] }, model: 'x' });
  });

  it('plans nothing when the plugin is already enabled, and says when the deny-list names it too', async () => {
    const plan = await planFor(`plugins:\n  enabled: [${PLUGIN_NAME}]\n  disabled:\n    - ${PLUGIN_NAME}\n`);
    expect(plan).toMatchObject({ text: undefined, created: false, deniedToo: true });
    expect((await planFor(`plugins:\n  enabled: []\n  disabled: [other]\n`)).deniedToo).toBe(false);
  });

  it.each([
    ['- a\n', /the top level is not a mapping/],
    ['plugins: [a]\n', /"plugins" is a list, expected a mapping/],
    ['plugins:\n  enabled: true\n', /"plugins.enabled" is a boolean, expected a list/],
    ['plugins:\n  enabled: {a: 1}\n', /"plugins.enabled" is a mapping, expected a list/],
    ['plugins: [\n', /is not valid YAML at line \d+, column \d+ \(\w+\); refusing to edit it/],
  ])('refuses %j, naming the place', async (text, message) => {
    await expect(planFor(text)).rejects.toThrow(message);
  });
});

describe('writeConfig', () => {
  it('replaces the file keeping its mode, through a symlink, leaving no temporary file', async () => {
    const dir = scratchDir('hermes-config-');
    const target = path.join(dir, 'real.yaml');
    const link = path.join(dir, 'config.yaml');
    await writeFile(target, 'old\n');
    await chmod(target, 0o600);
    await symlink(target, link);
    await writeConfig(link, 'new\n', false);
    expect(await readFile(target, 'utf8')).toBe('new\n');
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).sort()).toEqual(['config.yaml', 'real.yaml']);
  });

  it('creates a new file, and its directory, readable by others', async () => {
    const file = path.join(scratchDir('hermes-config-'), 'home', 'config.yaml');
    await writeConfig(file, 'plugins: {}\n', true);
    expect(await readFile(file, 'utf8')).toBe('plugins: {}\n');
    expect((await stat(file)).mode & 0o777).toBe(0o644 & ~process.umask());
  });

  it('reports a failed write and removes its temporary file', async () => {
    const dir = scratchDir('hermes-config-');
    // A directory in the config's place: the temporary file is written, the rename over it fails.
    const file = path.join(dir, 'config.yaml');
    await mkdir(file);
    await expect(writeConfig(file, 'new\n', false)).rejects.toThrow(new InstallError(`could not write ${file}: ${file} is a directory`));
    expect(await readdir(dir)).toEqual(['config.yaml']);
    expect(await readdir(file)).toEqual([]);
  });

  it('reports what is in the way of its temporary file, and neither overwrites nor removes it', async () => {
    const dir = scratchDir('hermes-config-');
    const file = path.join(dir, 'config.yaml');
    await writeFile(file, 'old\n');
    const temporary = `${file}.${PLUGIN_NAME}-${process.pid}.tmp`;
    for (const inTheWay of ['directory', 'file'] as const) {
      if (inTheWay === 'directory') await mkdir(temporary);
      else await writeFile(temporary, 'not ours\n');
      await expect(writeConfig(file, 'new\n', false)).rejects.toThrow(
        new InstallError(`could not write ${file}: ${temporary} already exists (left by an earlier run?); remove it and run install-plugin again`),
      );
      expect(await readFile(file, 'utf8')).toBe('old\n');
      if (inTheWay === 'directory') expect((await stat(temporary)).isDirectory()).toBe(true);
      else expect(await readFile(temporary, 'utf8')).toBe('not ours\n');
      await rm(temporary, { recursive: true });
    }
  });
});
