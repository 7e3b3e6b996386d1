/**
 * `hermes-prometheus-sidecar install-plugin [--hermes-home DIR] [--enable]`
 *
 * Copies the bundled bridge plugin (`plugin/hermes_prometheus_bridge/`, minus `__pycache__`)
 * into `$HERMES_HOME/plugins/hermes_prometheus_bridge/`, where Hermes discovers user plugins.
 * With `--enable` it also lists the plugin under `plugins.enabled` in `$HERMES_HOME/config.yaml`,
 * adding that one line to the file and keeping every other byte (hermesConfig.ts).
 *
 * The config is checked before anything is copied, so a refused config leaves the Hermes home
 * untouched. Writes go to a temporary sibling first and are renamed into place.
 */
import { copyFile, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseDocument } from 'yaml';
import { closest } from '../suggest.js';
import { PLUGIN_NAME, planConfigEdit, writeConfig } from './hermesConfig.js';
import { errorCode, InstallError } from './installError.js';

export { PLUGIN_NAME };

const DEFAULT_SIDECAR_URL = 'http://127.0.0.1:9479/v1/events';
const SKIPPED_NAMES = new Set(['__pycache__']);
const SKIPPED_SUFFIXES = ['.pyc', '.pyo'];

export interface InstallPluginIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Directory holding the plugin to install (`plugin/hermes_prometheus_bridge` of this package). */
  readonly pluginSourceDir: string;
}

const INSTALL_PLUGIN_HELP = `Usage: hermes-prometheus-sidecar install-plugin [--hermes-home DIR] [--enable] [--create]

Install the Hermes bridge plugin (${PLUGIN_NAME}) into DIR/plugins/${PLUGIN_NAME}/.

Options:
  --hermes-home DIR  Hermes home directory (default: $HERMES_HOME, else ~/.hermes); it must
                     already be a Hermes home (config.yaml, .env, state.db, sessions/, logs/
                     or plugins/ in it) unless --create is given
  --enable           also add ${PLUGIN_NAME} to plugins.enabled in DIR/config.yaml
                     (comments and other settings are kept; nothing changes if already listed)
  --create           make DIR a new Hermes home if it is not one yet (e.g. a fresh volume)
  -h, --help         show this help

Run it as the user who owns the Hermes home (in a container: --user with that uid and gid).
Exit status: 0 done, 1 refused or failed (nothing half-written), 2 bad arguments.
`;

/** The plugin directory shipped with this package (same relative path from src/ and dist/). */
export function defaultPluginSourceDir(): string {
  return fileURLToPath(new URL(`../../plugin/${PLUGIN_NAME}/`, import.meta.url));
}


interface Options {
  readonly hermesHome: string | undefined;
  readonly enable: boolean;
  readonly create: boolean;
  readonly help: boolean;
}

const OPTION_NAMES = ['hermes-home', 'enable', 'create', 'help'];
const SEE_HELP = 'see install-plugin --help';

/** parseArgs' messages quote Node's option syntax; these say what is wrong in one sentence, with the option probably meant. */
function argumentError(error: unknown): string {
  const { code, message } = error as { code?: string; message: string };
  const named = /'(-?-?[^' ]*)/.exec(message)?.[1] ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = closest(named.replace(/^-+/, '').replace(/=.*$/, ''), OPTION_NAMES);
      return near === undefined ? `${named} is not an option (${SEE_HELP})` : `${named} is not an option: did you mean --${near}? (${SEE_HELP})`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing/.test(message)
        ? `${named.replace(/ .*$/, '')} needs a value (${SEE_HELP})`
        : `${named.replace(/ .*$/, '')} takes no value (${SEE_HELP})`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `${named} is not an option; install-plugin takes only options (${SEE_HELP})`;
    default:
      return `${message} (${SEE_HELP})`;
  }
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      'hermes-home': { type: 'string' },
      enable: { type: 'boolean', default: false },
      create: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
    strict: true,
  });
  return { hermesHome: values['hermes-home'], enable: values.enable === true, create: values.create === true, help: values.help === true };
}

function expandHome(value: string, env: NodeJS.ProcessEnv): string {
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  if (value === '~') return home;
  if (value.startsWith('~/')) return path.join(home, value.slice(2));
  return value;
}

/** Flag, else `$HERMES_HOME`, else `~/.hermes` — the same order Hermes itself uses. */
export function resolveHermesHome(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const chosen = flag ?? (env.HERMES_HOME !== undefined && env.HERMES_HOME !== '' ? env.HERMES_HOME : '~/.hermes');
  return path.resolve(expandHome(chosen, env));
}


// ---------------------------------------------------------------------------- the Hermes home

/** What Hermes keeps in a home it has used; any one of them makes DIR a Hermes home. */
const HOME_MARKERS = ['config.yaml', '.env', 'state.db', 'sessions', 'logs', 'plugins'];

/**
 * A mistyped --hermes-home would otherwise become a new, unused home that Hermes never reads:
 * refuse a directory that is missing or holds none of Hermes' files, unless --create says so.
 */
async function checkHermesHome(hermesHome: string, create: boolean): Promise<void> {
  if (create) return;
  let entries: string[];
  try {
    entries = await readdir(hermesHome);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw new InstallError(`${hermesHome} does not exist: check --hermes-home (or $HERMES_HOME), or pass --create to make a new Hermes home there`);
    if (errorCode(error) === 'ENOTDIR') throw new InstallError(`${hermesHome} is not a directory: check --hermes-home (or $HERMES_HOME)`);
    throw error;
  }
  if (!entries.some((name) => HOME_MARKERS.includes(name))) {
    throw new InstallError(`${hermesHome} is not a Hermes home (it has none of ${HOME_MARKERS.join(', ')}): check --hermes-home (or $HERMES_HOME), or pass --create to make it one`);
  }
}

/** A permission error names the user who can write the home, and how to run as that user. */
async function permissionHint(hermesHome: string): Promise<string> {
  try {
    const owner = await stat(hermesHome);
    return `run install-plugin as the owner of ${hermesHome} (uid ${owner.uid}, gid ${owner.gid}); in a container, add --user ${owner.uid}:${owner.gid}`;
  } catch {
    return `run install-plugin as the user who owns ${hermesHome}`;
  }
}

// ---------------------------------------------------------------------------- plugin copy

async function readPluginVersion(sourceDir: string): Promise<string> {
  let manifest: string;
  try {
    manifest = await readFile(path.join(sourceDir, 'plugin.yaml'), 'utf8');
    await stat(path.join(sourceDir, '__init__.py'));
  } catch {
    throw new InstallError(`plugin source not found or incomplete: ${sourceDir}`);
  }
  const parsed: unknown = parseDocument(manifest).toJS();
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  if (fields.name !== PLUGIN_NAME) throw new InstallError(`${sourceDir} is not the ${PLUGIN_NAME} plugin`);
  return typeof fields.version === 'string' ? fields.version : 'unknown';
}

function isSkipped(name: string): boolean {
  return SKIPPED_NAMES.has(name) || SKIPPED_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/** Copy regular files and directories (bytecode caches excluded); returns the files copied. */
async function copyTree(from: string, to: string): Promise<number> {
  await mkdir(to, { recursive: true });
  let copied = 0;
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (isSkipped(entry.name)) continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      copied += await copyTree(source, target);
    } else if (entry.isFile()) {
      await copyFile(source, target);
      copied += 1;
    }
  }
  return copied;
}

/** Build the new plugin directory beside the old one, then swap it in. */
async function installPluginFiles(sourceDir: string, hermesHome: string): Promise<{ target: string; files: number }> {
  const pluginsDir = path.join(hermesHome, 'plugins');
  const target = path.join(pluginsDir, PLUGIN_NAME);
  if (path.resolve(sourceDir) === path.resolve(target)) {
    throw new InstallError(`the plugin source and the install target are the same directory: ${target}`);
  }
  const staging = path.join(pluginsDir, `.${PLUGIN_NAME}.installing-${process.pid}`);
  const previous = path.join(pluginsDir, `.${PLUGIN_NAME}.previous-${process.pid}`);
  try {
    await mkdir(pluginsDir, { recursive: true });
    await rm(staging, { recursive: true, force: true });
    const files = await copyTree(sourceDir, staging);
    const hadPrevious = await exists(target);
    if (hadPrevious) await rename(target, previous);
    await rename(staging, target);
    if (hadPrevious) await rm(previous, { recursive: true, force: true });
    return { target, files };
  } catch (error) {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    if (error instanceof InstallError) throw error;
    const code = errorCode(error);
    if (code === 'EACCES' || code === 'EPERM') {
      throw new InstallError(`permission denied writing ${pluginsDir}: ${await permissionHint(hermesHome)}`);
    }
    throw new InstallError(`could not install into ${target}: ${(error as Error).message}`);
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
}

// ---------------------------------------------------------------------------- command

async function install(options: Options, io: InstallPluginIo): Promise<void> {
  const hermesHome = resolveHermesHome(options.hermesHome, io.env);
  await checkHermesHome(hermesHome, options.create);
  const version = await readPluginVersion(io.pluginSourceDir);
  const plan = options.enable ? await planConfigEdit(hermesHome) : undefined;

  const { target, files } = await installPluginFiles(io.pluginSourceDir, hermesHome);
  io.stdout(`Installed ${PLUGIN_NAME} ${version} into ${target} (${files} files).\n`);

  if (plan === undefined) {
    io.stdout(`To enable it, run:\n  hermes plugins enable ${PLUGIN_NAME}\n`);
  } else if (plan.text === undefined) {
    io.stdout(`${PLUGIN_NAME} is already listed in plugins.enabled of ${plan.file}; left it unchanged.\n`);
  } else {
    await writeConfig(plan.file, plan.text, plan.created);
    io.stdout(`${plan.created ? 'Created' : 'Updated'} ${plan.file}: added ${PLUGIN_NAME} to plugins.enabled.\n`);
  }
  if (plan?.deniedToo === true) {
    io.stderr(
      `warning: ${PLUGIN_NAME} is also listed in plugins.disabled of ${plan.file}, which wins; ` +
        'remove it there for the plugin to load.\n',
    );
  }
  io.stdout(
    `Restart Hermes to load it. The plugin posts to ${DEFAULT_SIDECAR_URL} unless HERMES_SIDECAR_URL ` +
      "is set in Hermes' environment (and HERMES_SIDECAR_TOKEN when the sidecar requires a token).\n",
  );
}

/**
 * Run `install-plugin` with the arguments that follow the subcommand name.
 * Returns the exit status: 0 done, 1 refused or failed, 2 bad arguments.
 */
export async function runInstallPlugin(argv: string[], io: InstallPluginIo): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    io.stderr(`install-plugin: ${argumentError(error)}\n`);
    return 2;
  }
  if (options.help) {
    io.stdout(INSTALL_PLUGIN_HELP);
    return 0;
  }
  if (options.hermesHome !== undefined && options.hermesHome.trim() === '') {
    io.stderr(`install-plugin: --hermes-home must not be empty (${SEE_HELP})\n`);
    return 2;
  }
  try {
    await install(options, io);
    return 0;
  } catch (error) {
    if (!(error instanceof InstallError)) throw error;
    io.stderr(`install-plugin: ${error.message}\n`);
    return 1;
  }
}
