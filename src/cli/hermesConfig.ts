/**
 * Listing the bridge plugin under `plugins.enabled` of a Hermes `config.yaml` (install-plugin
 * --enable). The entry is added by inserting text, so every other byte of the user's file stays
 * as it was (spacing before inline comments, quoting, blank lines, line endings); the result is
 * parsed back and must equal the edited document. A layout the insertion does not handle is
 * re-rendered from the document instead (comments and key order kept, spacing normalised).
 */
import { mkdir, open, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, parseDocument, type Document, type ToStringOptions } from 'yaml';
import { errorCode, InstallError } from './installError.js';

export const PLUGIN_NAME = 'hermes_prometheus_bridge';

export interface ConfigPlan {
  readonly file: string;
  /** New file text, or undefined when the plugin is already enabled (nothing to write). */
  readonly text: string | undefined;
  readonly created: boolean;
  readonly deniedToo: boolean;
}

function describeNode(node: unknown): string {
  if (isSeq(node)) return 'a list';
  if (isMap(node)) return 'a mapping';
  if (isScalar(node)) return `a ${typeof node.value}`;
  return 'an alias or tag';
}

function isNullScalar(node: unknown): boolean {
  return node === undefined || node === null || (isScalar(node) && node.value === null);
}

function listsPlugin(node: unknown): boolean {
  return isSeq(node) && node.items.some((item) => isScalar(item) && item.value === PLUGIN_NAME);
}

/**
 * Stringify options that keep the file looking as it did: no re-folding of long strings, flow
 * lists as `[a, b]`, and block lists indented the way the file already indents them. PyYAML (and
 * so a config Hermes wrote) puts `- item` level with its key; hand-written files often indent it.
 * Only used when the entry cannot be added by inserting text (spliceEntry).
 */
function formattingLike(source: string): ToStringOptions {
  return { lineWidth: 0, flowCollectionPadding: false, indentSeq: !unindentedLists(source) };
}

function unindentedLists(source: string): boolean {
  return /^( *)[^ #\n-][^\n]*:[ \t]*(#[^\n]*)?\r?\n\1- /m.test(source);
}

/** Add the plugin to `plugins.enabled` of a parsed config; returns false when already there. */
function enableInDocument(doc: Document, file: string): boolean {
  if (isNullScalar(doc.contents)) doc.contents = doc.createNode({});
  if (!isMap(doc.contents)) throw new InstallError(`${file}: the top level is not a mapping; refusing to edit it`);
  const plugins: unknown = doc.get('plugins', true);
  if (isNullScalar(plugins)) {
    doc.set('plugins', doc.createNode({ enabled: [PLUGIN_NAME] }));
    return true;
  }
  if (!isMap(plugins)) {
    throw new InstallError(`${file}: "plugins" is ${describeNode(plugins)}, expected a mapping; refusing to edit it`);
  }
  const enabled: unknown = plugins.get('enabled', true);
  if (isNullScalar(enabled)) {
    plugins.set('enabled', doc.createNode([PLUGIN_NAME]));
    return true;
  }
  if (!isSeq(enabled)) {
    throw new InstallError(`${file}: "plugins.enabled" is ${describeNode(enabled)}, expected a list; refusing to edit it`);
  }
  if (listsPlugin(enabled)) return false;
  enabled.add(doc.createNode(PLUGIN_NAME));
  return true;
}

// ------------------------------------------------------------- the edit as inserted text

type Range = readonly [number, number, number];
type Ranged = { readonly range?: Range | null };

/** Offset just past the end of the line holding `offset` (the newline included). */
function afterLine(source: string, offset: number): number {
  const newline = source.indexOf('\n', Math.max(0, offset - 1));
  return newline === -1 ? source.length : newline + 1;
}

/** The column of `offset` when only spaces precede it on its line, else undefined. */
function indentBefore(source: string, offset: number, marker = ''): number | undefined {
  const lineStart = source.lastIndexOf('\n', offset - 1) + 1;
  const before = source.slice(lineStart, offset);
  const found = new RegExp(`^( *)${marker}$`).exec(before);
  return found?.[1]?.length;
}

/** Inserts `text` (lines ending in \n) at `offset`, with the file's own line ending. */
function insertAt(source: string, offset: number, text: string): string {
  const eol = source.includes('\r\n') ? '\r\n' : '\n';
  const head = source.slice(0, offset);
  const lines = text.replaceAll('\n', eol);
  return `${head}${head === '' || head.endsWith('\n') ? '' : eol}${lines}${source.slice(offset)}`;
}

/** `enabled:` and its one item, at `column`, in the file's list style. */
function enabledBlock(column: number, source: string): string {
  const pad = ' '.repeat(column);
  return `${pad}enabled:\n${pad}${unindentedLists(source) ? '' : '  '}- ${PLUGIN_NAME}\n`;
}

function isEmptyValue(source: string, node: unknown): boolean {
  if (node === null || node === undefined) return true;
  const range = (node as Ranged).range;
  return isScalar(node) && node.value === null && (range === undefined || range === null || source.slice(range[0], range[1]).trim() === '');
}

/**
 * The config text with the entry added by inserting it, every other byte kept (spacing before
 * inline comments, quoting, blank lines); undefined for a layout this does not handle (the
 * caller re-renders the document then). Called on the unedited document.
 */
function spliceEntry(source: string, doc: Document): string | undefined {
  const top: unknown = doc.contents;
  if (isNullScalar(top)) {
    const block = `plugins:\n${enabledBlock(2, source)}`;
    if (source.trim() === '') return block;
    return insertAt(source, source.length, `\n${block}`);
  }
  if (!isMap(top) || top.flow === true) return undefined;
  const pair = top.items.find((item) => isScalar(item.key) && item.key.value === 'plugins');
  if (pair === undefined) {
    const first = top.items[0]?.key as Ranged | undefined;
    if (first?.range === undefined || first.range === null || indentBefore(source, first.range[0]) !== 0) return undefined;
    return insertAt(source, source.length, `plugins:\n${enabledBlock(2, source)}`);
  }
  const key = pair.key as Ranged;
  if (key.range === undefined || key.range === null) return undefined;
  const plugins: unknown = pair.value;
  if (isEmptyValue(source, plugins)) {
    const column = indentBefore(source, key.range[0]);
    return column === undefined ? undefined : insertAt(source, afterLine(source, key.range[1]), enabledBlock(column + 2, source));
  }
  if (!isMap(plugins)) return undefined;
  const enabledPair = plugins.items.find((item) => isScalar(item.key) && item.key.value === 'enabled');
  if (enabledPair === undefined) return spliceIntoMap(source, plugins.flow === true, plugins.items);
  const enabledKey = enabledPair.key as Ranged;
  const enabled: unknown = enabledPair.value;
  if (isEmptyValue(source, enabled)) {
    const column = enabledKey.range === undefined || enabledKey.range === null ? undefined : indentBefore(source, enabledKey.range[0]);
    if (column === undefined || plugins.flow === true) return undefined;
    const pad = ' '.repeat(column + (unindentedLists(source) ? 0 : 2));
    return insertAt(source, afterLine(source, enabledKey.range?.[1] ?? 0), `${pad}- ${PLUGIN_NAME}\n`);
  }
  if (!isSeq(enabled)) return undefined;
  const range = (enabled as Ranged).range;
  if (range === undefined || range === null) return undefined;
  if (enabled.flow === true) {
    const close = source.lastIndexOf(']', range[1]);
    if (close < range[0]) return undefined;
    const inside = source.slice(range[0] + 1, close).trim();
    const separator = inside === '' || inside.endsWith(',') ? '' : ', ';
    return `${source.slice(0, close)}${separator}${PLUGIN_NAME}${source.slice(close)}`;
  }
  const last = enabled.items.at(-1) as Ranged | undefined;
  if (last?.range === undefined || last.range === null) return undefined;
  const column = indentBefore(source, last.range[0], '- +');
  if (column === undefined) return undefined;
  return insertAt(source, afterLine(source, last.range[1]), `${' '.repeat(column)}- ${PLUGIN_NAME}\n`);
}

/** `enabled` added after the last entry of a block mapping (`plugins:` with other settings). */
function spliceIntoMap(source: string, flow: boolean, items: readonly { key: unknown; value: unknown }[]): string | undefined {
  const first = items[0]?.key as Ranged | undefined;
  const last = items.at(-1);
  const end = ((last?.value ?? last?.key) as Ranged | undefined)?.range;
  if (flow || first?.range === undefined || first.range === null || end === undefined || end === null) return undefined;
  const column = indentBefore(source, first.range[0]);
  return column === undefined ? undefined : insertAt(source, afterLine(source, end[1]), enabledBlock(column, source));
}

/** The spliced text when it parses to exactly the edited document, else undefined. */
function checkedSplice(source: string, edited: Document): string | undefined {
  const text = spliceEntry(source, parseDocument(source));
  if (text === undefined) return undefined;
  const reparsed = parseDocument(text);
  if (reparsed.errors.length > 0) return undefined;
  return isDeepStrictEqual(reparsed.toJS(), edited.toJS()) ? text : undefined;
}

export async function planConfigEdit(hermesHome: string): Promise<ConfigPlan> {
  const file = path.join(hermesHome, 'config.yaml');
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      return { file, text: `plugins:\n  enabled:\n    - ${PLUGIN_NAME}\n`, created: true, deniedToo: false };
    }
    throw new InstallError(`cannot read ${file} (${errorCode(error) ?? (error as Error).message}); refusing to edit it`);
  }
  const doc = parseDocument(source, { prettyErrors: true });
  const [firstError] = doc.errors;
  if (firstError !== undefined) {
    const where = firstError.linePos?.[0];
    const at = where === undefined ? '' : ` at line ${where.line}, column ${where.col}`;
    throw new InstallError(`${file} is not valid YAML${at} (${firstError.code}); refusing to edit it`);
  }
  const changed = enableInDocument(doc, file);
  const denied: unknown = doc.getIn(['plugins', 'disabled'], true);
  const text = changed ? (checkedSplice(source, doc) ?? doc.toString(formattingLike(source))) : undefined;
  return { file, text, created: false, deniedToo: listsPlugin(denied) };
}

/** Replace the file through a temporary sibling, keeping its permissions and any symlink. */
export async function writeConfig(file: string, text: string, created: boolean): Promise<void> {
  let temporary: string | undefined;
  let made = false;
  try {
    const target = created ? file : await realpath(file);
    const mode = created ? undefined : (await stat(target)).mode & 0o7777;
    temporary = `${target}.${PLUGIN_NAME}-${process.pid}.tmp`;
    await mkdir(path.dirname(target), { recursive: true });
    // Exclusive creation: whatever already sits at the temporary path is not ours to overwrite or remove.
    const handle = await open(temporary, 'wx', mode ?? 0o644);
    made = true;
    try {
      await handle.writeFile(text, 'utf8');
      if (mode !== undefined) await handle.chmod(mode);
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    // Removing the temporary file is tidying up: its own failure must not replace the reason the write failed.
    if (made && temporary !== undefined) await rm(temporary, { force: true }).catch(() => undefined);
    throw new InstallError(`could not write ${file}: ${writeFailure(error)}`);
  }
}

/** Why writing the config failed, in words that name the path in the way. */
function writeFailure(error: unknown): string {
  const { dest, path: where } = error as { dest?: string; path?: string };
  switch (errorCode(error)) {
    case 'EISDIR':
      return `${dest ?? where ?? 'the target'} is a directory`;
    case 'EEXIST':
      return `${where ?? 'the temporary file'} already exists (left by an earlier run?); remove it and run install-plugin again`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied on ${where ?? 'its directory'}`;
    default:
      return (error as Error).message;
  }
}
