import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  PLUGIN_NAME,
  defaultPluginSourceDir,
  resolveHermesHome,
  runInstallPlugin,
  type InstallPluginIo,
} from '../../src/cli/installPlugin.js';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let scratch: string;
let source: string;
let home: string;

async function run(argv: string[], overrides: Partial<InstallPluginIo> = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runInstallPlugin(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: {},
    pluginSourceDir: source,
    ...overrides,
  });
  return { code, stdout, stderr };
}

/** Relative paths of every file under `root`, sorted. */
async function listFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) found.push(path.relative(root, path.join(entry.parentPath, entry.name)));
  }
  return found.sort();
}

const configFile = () => path.join(home, 'config.yaml');
const installed = () => path.join(home, 'plugins', PLUGIN_NAME);

/** A Hermes home as Hermes leaves it before any config.yaml: a sessions directory. */
async function makeHome(dir = home): Promise<void> {
  await mkdir(path.join(dir, 'sessions'), { recursive: true });
}

async function writeConfig(text: string): Promise<void> {
  await mkdir(home, { recursive: true });
  await writeFile(configFile(), text);
}

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'install-plugin-'));
  source = path.join(scratch, 'source', PLUGIN_NAME);
  home = path.join(scratch, 'hermes-home');
  await mkdir(path.join(source, 'sub', '__pycache__'), { recursive: true });
  await mkdir(path.join(source, '__pycache__'), { recursive: true });
  await writeFile(path.join(source, 'plugin.yaml'), `name: ${PLUGIN_NAME}\nversion: 9.8.7\nhooks:\n  - post_tool_call\n`);
  await writeFile(path.join(source, '__init__.py'), 'def register(ctx):\n    pass\n');
  await writeFile(path.join(source, 'sub', 'helper.py'), 'X = 1\n');
  await writeFile(path.join(source, 'sub', '__pycache__', 'helper.cpython-311.pyc'), 'bytecode');
  await writeFile(path.join(source, '__pycache__', '__init__.cpython-311.pyc'), 'bytecode');
  await writeFile(path.join(source, 'stray.pyc'), 'bytecode');
});

afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('install-plugin: copying the plugin', () => {
  it('copies the plugin without bytecode caches and tells how to enable it', async () => {
    await makeHome();
    const result = await run(['--hermes-home', home]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(await listFiles(installed())).toEqual(['__init__.py', 'plugin.yaml', 'sub/helper.py']);
    expect(await readFile(path.join(installed(), 'sub', 'helper.py'), 'utf8')).toBe('X = 1\n');
    expect(result.stdout).toBe(
      `Installed ${PLUGIN_NAME} 9.8.7 into ${installed()} (3 files).\n` +
        `To enable it, run:\n  hermes plugins enable ${PLUGIN_NAME}\n` +
        `Restart Hermes to load it. The plugin posts to http://127.0.0.1:9479/v1/events unless ` +
        `HERMES_SIDECAR_URL is set in Hermes' environment (and HERMES_SIDECAR_TOKEN when the sidecar requires a token).\n`,
    );
    await expect(stat(configFile())).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('replaces an earlier install completely and leaves no staging directories', async () => {
    await makeHome();
    await mkdir(installed(), { recursive: true });
    await writeFile(path.join(installed(), 'removed_module.py'), 'old\n');
    await writeFile(path.join(installed(), '__init__.py'), 'old\n');
    expect((await run(['--hermes-home', home])).code).toBe(0);
    expect(await listFiles(installed())).toEqual(['__init__.py', 'plugin.yaml', 'sub/helper.py']);
    expect(await readFile(path.join(installed(), '__init__.py'), 'utf8')).toBe('def register(ctx):\n    pass\n');
    expect(await readdir(path.join(home, 'plugins'))).toEqual([PLUGIN_NAME]);
  });

  it('installs the real bundled plugin from the package', async () => {
    await makeHome();
    const bundled = defaultPluginSourceDir();
    const result = await run(['--hermes-home', home], { pluginSourceDir: bundled });
    expect(result.code).toBe(0);
    const expected = (await listFiles(bundled)).filter((file) => !file.includes('__pycache__') && !file.endsWith('.pyc'));
    expect(await listFiles(installed())).toEqual(expected);
    expect(expected).toEqual(expect.arrayContaining(['__init__.py', 'plugin.yaml', 'bridge.py', 'fields.py']));
    expect(result.stdout).toContain(`Installed ${PLUGIN_NAME} 0.1.0 into ${installed()}`);
  });

  it('refuses a source directory that is not the plugin', async () => {
    await writeFile(path.join(source, 'plugin.yaml'), 'name: something_else\n');
    const result = await run(['--hermes-home', home, '--create']);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `install-plugin: ${source} is not the ${PLUGIN_NAME} plugin\n` });
    const missing = await run(['--hermes-home', home, '--create'], { pluginSourceDir: path.join(scratch, 'nowhere') });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`install-plugin: plugin source not found or incomplete: ${path.join(scratch, 'nowhere')}\n`);
    await expect(stat(home)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('install-plugin: choosing the Hermes home', () => {
  it('takes the flag, else HERMES_HOME, else ~/.hermes', () => {
    expect(resolveHermesHome('/flag/home', { HERMES_HOME: '/env/home', HOME: '/users/ada' })).toBe('/flag/home');
    expect(resolveHermesHome(undefined, { HERMES_HOME: '/env/home', HOME: '/users/ada' })).toBe('/env/home');
    expect(resolveHermesHome(undefined, { HERMES_HOME: '', HOME: '/users/ada' })).toBe('/users/ada/.hermes');
    expect(resolveHermesHome('~/profiles/work', { HOME: '/users/ada' })).toBe('/users/ada/profiles/work');
  });

  it('installs into $HERMES_HOME when no flag is given', async () => {
    await makeHome();
    const result = await run([], { env: { HERMES_HOME: home } });
    expect(result.code).toBe(0);
    expect(await listFiles(installed())).toEqual(['__init__.py', 'plugin.yaml', 'sub/helper.py']);
  });

  it('installs into ~/.hermes by default', async () => {
    await makeHome(path.join(scratch, '.hermes'));
    const result = await run([], { env: { HOME: scratch } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`into ${path.join(scratch, '.hermes', 'plugins', PLUGIN_NAME)} (3 files)`);
  });
});

describe('install-plugin: a directory that is not a Hermes home', () => {
  it('refuses a mistyped home that does not exist, naming it and --create, and creates nothing', async () => {
    const typo = path.join(scratch, 'hermes-hom');
    const result = await run(['--hermes-home', typo, '--enable']);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `install-plugin: ${typo} does not exist: check --hermes-home (or $HERMES_HOME), or pass --create to make a new Hermes home there\n`,
    });
    await expect(stat(typo)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses an existing directory holding none of Hermes\' files', async () => {
    await mkdir(path.join(home, 'src'), { recursive: true });
    const result = await run(['--hermes-home', home]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `install-plugin: ${home} is not a Hermes home (it has none of config.yaml, .env, state.db, sessions, logs, plugins): check --hermes-home (or $HERMES_HOME), or pass --create to make it one\n`,
    );
    expect(await readdir(home)).toEqual(['src']);
  });

  it('makes a new home with --create', async () => {
    const result = await run(['--hermes-home', home, '--enable', '--create']);
    expect(result.code).toBe(0);
    expect(await listFiles(installed())).toEqual(['__init__.py', 'plugin.yaml', 'sub/helper.py']);
    expect(await readFile(configFile(), 'utf8')).toBe(`plugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`);
  });
});

describe('install-plugin --enable', () => {
  it('creates config.yaml when there is none', async () => {
    await makeHome();
    const result = await run(['--hermes-home', home, '--enable']);
    expect(result.code).toBe(0);
    expect(await readFile(configFile(), 'utf8')).toBe(`plugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`);
    expect(result.stdout).toContain(`Created ${configFile()}: added ${PLUGIN_NAME} to plugins.enabled.\n`);
    expect(result.stdout).not.toContain('hermes plugins enable');
  });

  it('keeps comments, other keys and order, and is idempotent', async () => {
    await writeConfig(
      [
        '# Hermes configuration',
        'model:',
        '  default: anthropic/claude-sonnet-4.6 # the main model',
        '  provider: openrouter',
        '',
        'plugins:',
        '  # general plugins are opt-in',
        '  enabled:',
        '    - observability/langfuse # traces',
        '  disabled: []',
        '  hook_callback_timeout: 30',
        '',
        '# trailing comment',
        '',
      ].join('\n'),
    );
    const expected = [
      '# Hermes configuration',
      'model:',
      '  default: anthropic/claude-sonnet-4.6 # the main model',
      '  provider: openrouter',
      '',
      'plugins:',
      '  # general plugins are opt-in',
      '  enabled:',
      '    - observability/langfuse # traces',
      `    - ${PLUGIN_NAME}`,
      '  disabled: []',
      '  hook_callback_timeout: 30',
      '',
      '# trailing comment',
      '',
    ].join('\n');
    const first = await run(['--hermes-home', home, '--enable']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Updated ${configFile()}: added ${PLUGIN_NAME} to plugins.enabled.\n`);
    expect(await readFile(configFile(), 'utf8')).toBe(expected);

    const before = await stat(configFile());
    const second = await run(['--hermes-home', home, '--enable']);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`${PLUGIN_NAME} is already listed in plugins.enabled of ${configFile()}; left it unchanged.\n`);
    expect(await readFile(configFile(), 'utf8')).toBe(expected);
    expect((await stat(configFile())).mtimeMs).toBe(before.mtimeMs);
  });

  it('keeps a PyYAML-style file (list items level with their key) in that style', async () => {
    await writeConfig('plugins:\n  enabled:\n  - observability/langfuse\ntoolsets:\n- hermes-cli\n');
    expect((await run(['--hermes-home', home, '--enable'])).code).toBe(0);
    expect(await readFile(configFile(), 'utf8')).toBe(
      `plugins:\n  enabled:\n  - observability/langfuse\n  - ${PLUGIN_NAME}\ntoolsets:\n- hermes-cli\n`,
    );
  });

  it.each([
    ['an empty file', '', `plugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`],
    ['only a comment', '# nothing yet\n', `# nothing yet\n\nplugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`],
    ['plugins without enabled', 'plugins:\n  hook_callback_timeout: 30\ndisplay:\n  theme: dark\n',
      `plugins:\n  hook_callback_timeout: 30\n  enabled:\n    - ${PLUGIN_NAME}\ndisplay:\n  theme: dark\n`],
    ['an empty plugins key', 'model: x\nplugins:\n', `model: x\nplugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`],
    ['an empty enabled key', 'plugins:\n  enabled:\n  disabled: [foo]\n',
      `plugins:\n  enabled:\n    - ${PLUGIN_NAME}\n  disabled: [foo]\n`],
    ['flow style', 'plugins: {enabled: [langfuse]}\n', `plugins: {enabled: [langfuse, ${PLUGIN_NAME}]}\n`],
  ])('adds the entry to %s', async (_name, before, after) => {
    await writeConfig(before);
    const result = await run(['--hermes-home', home, '--enable']);
    expect(result.code).toBe(0);
    expect(await readFile(configFile(), 'utf8')).toBe(after);
  });

  it.each([
    ['invalid YAML', 'plugins:\n  enabled: [a, b\nmodel: x\n', /is not valid YAML at line \d+, column \d+ \(\w+\); refusing to edit it/],
    ['a duplicate key', 'plugins: {}\nplugins: {}\n', /is not valid YAML at line 2, column 1 \(DUPLICATE_KEY\)/],
    ['a list at the top', '- a\n- b\n', /the top level is not a mapping; refusing to edit it/],
    ['plugins as a list', 'plugins:\n  - langfuse\n', /"plugins" is a list, expected a mapping; refusing to edit it/],
    ['plugins as a string', 'plugins: langfuse\n', /"plugins" is a string, expected a mapping; refusing to edit it/],
    ['enabled as a string', 'plugins:\n  enabled: langfuse\n', /"plugins.enabled" is a string, expected a list; refusing to edit it/],
    ['enabled as a mapping', 'plugins:\n  enabled: {langfuse: true}\n', /"plugins.enabled" is a mapping, expected a list; refusing to edit it/],
  ])('refuses %s, changing nothing and installing nothing', async (_name, text, message) => {
    await writeConfig(text);
    const result = await run(['--hermes-home', home, '--enable']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^install-plugin: /);
    expect(result.stderr).toContain(configFile());
    expect(result.stderr).toMatch(message);
    expect(await readFile(configFile(), 'utf8')).toBe(text);
    await expect(stat(path.join(home, 'plugins'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it.each([
    [
      'spacing before inline comments, quoting and blank lines',
      [
        'model:',
        '  default: "anthropic/claude-sonnet-4.6"    # the main model',
        "  provider: 'openrouter'\t# tab before the comment",
        '',
        '',
        'plugins:',
        '  enabled:      # opt-in',
        '    -   observability/langfuse        # traces',
        '    # - disabled/for-now',
        '  disabled:   [ a,  b ]',
        'display: {theme: dark,   compact: true}',
        '',
      ].join('\n'),
      `    - ${PLUGIN_NAME}`,
      8,
    ],
    ['PyYAML style without a final newline', 'plugins:\n  enabled:\n  - a   # first\ntoolsets:\n- hermes-cli', `  - ${PLUGIN_NAME}`, 3],
    ['CRLF line endings', 'plugins:\r\n  enabled:\r\n    - a  # x\r\nmodel:  m\r\n', `    - ${PLUGIN_NAME}\r`, 3],
  ])('keeps every byte of a file with %s, adding one line', async (_name, before, line, at) => {
    await writeConfig(before);
    expect((await run(['--hermes-home', home, '--enable'])).code).toBe(0);
    const lines = before.split('\n');
    lines.splice(at, 0, line);
    expect(await readFile(configFile(), 'utf8')).toBe(lines.join('\n'));
  });

  it('refuses an unreadable config', async () => {
    await mkdir(configFile(), { recursive: true }); // a directory where the file should be
    const result = await run(['--hermes-home', home, '--enable']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`install-plugin: cannot read ${configFile()} (EISDIR); refusing to edit it\n`);
  });

  it('says in one sentence, exit 1, what stops the config being written, leaving it and what is in the way alone', async () => {
    await writeConfig('model: x\n');
    // A directory at the temporary file's path (runInstallPlugin runs in this process, so with this pid).
    const inTheWay = `${configFile()}.${PLUGIN_NAME}-${process.pid}.tmp`;
    await mkdir(path.join(inTheWay, 'keep'), { recursive: true });
    const result = await run(['--hermes-home', home, '--enable']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `install-plugin: could not write ${configFile()}: ${inTheWay} already exists (left by an earlier run?); remove it and run install-plugin again\n`,
    );
    expect(await readFile(configFile(), 'utf8')).toBe('model: x\n');
    expect(await readdir(inTheWay)).toEqual(['keep']);
  });

  it('keeps the file mode and a symlinked config', async () => {
    const realConfig = path.join(scratch, 'shared-config.yaml');
    await writeFile(realConfig, 'model: x\n');
    await chmod(realConfig, 0o600);
    await mkdir(home, { recursive: true });
    await symlink(realConfig, configFile());
    expect((await run(['--hermes-home', home, '--enable'])).code).toBe(0);
    expect((await lstat(configFile())).isSymbolicLink()).toBe(true);
    expect(await readlink(configFile())).toBe(realConfig);
    expect(await readFile(realConfig, 'utf8')).toBe(`model: x\nplugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`);
    expect((await stat(realConfig)).mode & 0o777).toBe(0o600);
    expect((await readdir(scratch)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('warns when plugins.disabled also lists the plugin (the deny-list wins)', async () => {
    await writeConfig(`plugins:\n  enabled: []\n  disabled:\n    - ${PLUGIN_NAME}\n`);
    const result = await run(['--hermes-home', home, '--enable']);
    expect(result.code).toBe(0);
    expect(await readFile(configFile(), 'utf8')).toBe(`plugins:\n  enabled: [${PLUGIN_NAME}]\n  disabled:\n    - ${PLUGIN_NAME}\n`);
    expect(result.stderr).toBe(
      `warning: ${PLUGIN_NAME} is also listed in plugins.disabled of ${configFile()}, which wins; ` +
        'remove it there for the plugin to load.\n',
    );
  });
});

describe('install-plugin: arguments', () => {
  it('prints help', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: hermes-prometheus-sidecar install-plugin \[--hermes-home DIR\] \[--enable\] \[--create\]\n/);
    expect((await run(['-h'])).stdout).toBe(result.stdout);
  });

  it.each([
    ['--enabel', '--enable'],
    ['--hermes-hom', '--hermes-home'],
    ['--hermes_home', '--hermes-home'],
  ])('suggests the option meant for %s', async (typed, meant) => {
    const result = await run(['--hermes-home', home, typed]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`install-plugin: ${typed} is not an option: did you mean ${meant}? (see install-plugin --help)\n`);
    await expect(stat(home)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('suggests nothing for an option unlike any', async () => {
    const result = await run(['--bogus']);
    expect(result.stderr).toBe('install-plugin: --bogus is not an option (see install-plugin --help)\n');
  });

  it.each([
    [['--bogus'], '--bogus is not an option (see install-plugin --help)'],
    [['extra-positional'], 'extra-positional is not an option; install-plugin takes only options (see install-plugin --help)'],
    [['--hermes-home'], '--hermes-home needs a value (see install-plugin --help)'],
    [['--enable=yes'], '--enable takes no value (see install-plugin --help)'],
    [['--hermes-home', ''], '--hermes-home must not be empty (see install-plugin --help)'],
  ])(
    'rejects %j with exit status 2 and one sentence, not the usage',
    async (argv, sentence) => {
      const result = await run(argv);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(`install-plugin: ${sentence}\n`);
      await expect(stat(home)).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );
});
