/**
 * The YAML config file, read strictly: every key must be a known one (a typo is an error that
 * names the key and, when one is close, the key meant), sections must be mappings, and the
 * label rules and bucket overrides that only the file can hold are validated here. Option
 * values are validated by config.ts, which knows where else a value could have come from.
 */
import { yaml } from './lazyYaml.js';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { OPEN_LABELS, type OpenLabel } from './metrics/labels.js';
import { closest } from './suggest.js';
import { DEFAULT_BUCKETS, type BucketSetName } from './metrics/declare.js';

/** One option's value as the file gives it, with its key as written (`ingest.queue_capacity`). */
export interface FileSetting {
  readonly value: unknown;
  readonly key: string;
}

export interface FileLabelRule {
  readonly cap?: number;
  readonly allow?: readonly string[];
  readonly rewrite?: Readonly<Record<string, string>>;
}

/** USD per million tokens of one provider/model (`prices:`), field names as in the file. */
export interface FilePrice {
  readonly provider: string;
  readonly model: string;
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number | undefined;
  readonly cacheWrite: number | undefined;
}

export interface ConfigFile {
  readonly path: string;
  /** By option flag (`ingest.queue-capacity`). */
  readonly settings: ReadonlyMap<string, FileSetting>;
  readonly labels: Partial<Record<OpenLabel, FileLabelRule>>;
  readonly buckets: Partial<Record<BucketSetName, readonly number[]>>;
  readonly prices: readonly FilePrice[];
}

/** A value as an error message shows it: printable, at most 64 characters, never a whole file. */
export function show(value: unknown): string {
  const plain = typeof value === 'string' && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value);
  const text = plain ? value : (JSON.stringify(value) ?? String(value));
  return text.length > 64 ? `${text.slice(0, 63)}…` : text;
}

/** "a, b or c" */
export function oneOf(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1) ?? ''}`;
}

/**
 * Numbers as YAML, flags and environment variables give them: a number, or a string that is a
 * plain decimal number. Anything else (`many`, `true`, `0x10`, a list) is left as it is, to fail
 * the number check rather than be coerced into one (`true` is not 1, an empty string is not 0).
 */
export const numberLike = (schema: z.ZodNumber) =>
  z.preprocess((value) => {
    if (typeof value !== 'string') return value;
    const text = value.trim();
    return /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(text) ? Number(text) : value;
  }, schema);

export const positiveWholeNumber = numberLike(z.number().int().positive().max(Number.MAX_SAFE_INTEGER));

/** USD per million tokens: far above any list price (the dearest are hundreds). */
const MAX_PRICE_PER_MILLION = 1e6;

/** The key tree of the file: sections, option leaves, and the two sections only the file has. */
type Node =
  | { readonly kind: 'section'; readonly children: Map<string, Node> }
  | { readonly kind: 'option'; readonly flag: string }
  | { readonly kind: 'labels' }
  | { readonly kind: 'buckets' }
  | { readonly kind: 'prices' };

type Section = Extract<Node, { kind: 'section' }>;

/** Keys are written with underscores in the file; dashes are accepted as the same key. */
const canonical = (key: string): string => key.replaceAll('-', '_');

function keyTree(flags: readonly string[]): Section {
  const root: Section = { kind: 'section', children: new Map() };
  for (const flag of flags) {
    const parts = flag.split('.').map(canonical);
    let node = root;
    for (const part of parts.slice(0, -1)) {
      let child = node.children.get(part);
      if (child === undefined) {
        child = { kind: 'section', children: new Map() };
        node.children.set(part, child);
      }
      if (child.kind !== 'section') throw new Error(`option table: ${flag} nests under an option`);
      node = child;
    }
    node.children.set(parts.at(-1) ?? flag, { kind: 'option', flag });
  }
  root.children.set('labels', { kind: 'labels' });
  root.children.set('buckets', { kind: 'buckets' });
  root.children.set('prices', { kind: 'prices' });
  return root;
}

/** Every option leaf under a section, as its dotted file key: candidates for a key in the wrong section. */
function leafKeys(section: Section, prefix: readonly string[] = []): string[] {
  return [...section.children].flatMap(([name, node]) =>
    node.kind === 'section' ? leafKeys(node, [...prefix, name]) : [[...prefix, name].join('.')],
  );
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describeKind = (value: unknown): string =>
  value === null ? 'empty' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'a mapping' : show(JSON.stringify(value));

class FileReader {
  readonly settings = new Map<string, FileSetting>();
  labels: ConfigFile['labels'] = {};
  buckets: ConfigFile['buckets'] = {};
  prices: FilePrice[] = [];

  constructor(
    private readonly path: string,
    readonly root: Section,
  ) {}

  private fail(key: string, sentenceRest: string): ConfigError {
    const end = sentenceRest.endsWith('?') ? '' : '.';
    return new ConfigError(`${key} in the config file ${this.path} ${sentenceRest}${end}`);
  }

  private unknownKey(prefix: readonly string[], key: string, known: readonly string[], elsewhere: readonly string[]): ConfigError {
    const dotted = [...prefix, key].join('.');
    const near = closest(key, known);
    if (near !== undefined) return this.fail(dotted, `is not a known key: did you mean ${[...prefix, near].join('.')}?`);
    const moved = closest(key, elsewhere.map((leaf) => leaf.split('.').at(-1) ?? leaf));
    const movedTo = elsewhere.find((leaf) => leaf.split('.').at(-1) === moved);
    if (movedTo !== undefined) return this.fail(dotted, `is not a known key: did you mean ${movedTo}?`);
    return this.fail(dotted, `is not a known key: expected one of ${oneOf(known)}`);
  }

  /** Keys of a mapping, each once: `queue_capacity` and `queue-capacity` together are a conflict. */
  private entries(prefix: readonly string[], value: Record<string, unknown>): [string, string, unknown][] {
    const seen = new Map<string, string>();
    return Object.entries(value).map(([key, inner]) => {
      const name = canonical(key);
      const earlier = seen.get(name);
      if (earlier !== undefined) {
        throw this.fail([...prefix, key].join('.'), `sets the same option as ${[...prefix, earlier].join('.')}: keep one of them`);
      }
      seen.set(name, key);
      return [key, name, inner];
    });
  }

  readSection(section: Section, prefix: readonly string[], value: unknown): void {
    if (value === null || value === undefined) return; // `ingest:` with nothing under it
    const known = [...section.children.keys()];
    if (!isMapping(value)) {
      throw this.fail(prefix.join('.'), `is ${describeKind(value)} but must be a mapping of ${oneOf(known)}`);
    }
    const elsewhere = leafKeys(this.root);
    for (const [key, name, inner] of this.entries(prefix, value)) {
      const node = section.children.get(name);
      const path = [...prefix, key];
      if (node === undefined) throw this.unknownKey(prefix, key, known, elsewhere);
      if (node.kind === 'section') this.readSection(node, path, inner);
      else if (node.kind === 'option') {
        if (inner !== null && inner !== undefined) this.settings.set(node.flag, { value: inner, key: path.join('.') });
      } else if (node.kind === 'labels') this.labels = this.readLabels(path, inner);
      else if (node.kind === 'buckets') this.buckets = this.readBuckets(path, inner);
      else this.prices = this.readPrices(path, inner);
    }
  }

  private readLabels(prefix: readonly string[], value: unknown): ConfigFile['labels'] {
    const rules: Partial<Record<OpenLabel, FileLabelRule>> = {};
    if (value === null || value === undefined) return rules;
    const labels: readonly string[] = OPEN_LABELS;
    if (!isMapping(value)) throw this.fail(prefix.join('.'), `is ${describeKind(value)} but must be a mapping of ${oneOf(labels)} to rules`);
    for (const [label, , rule] of this.entries(prefix, value)) {
      if (!labels.includes(label)) throw this.unknownKey(prefix, label, labels, []);
      rules[label as OpenLabel] = this.readLabelRule([...prefix, label], rule);
    }
    return rules;
  }

  private readLabelRule(prefix: readonly string[], value: unknown): FileLabelRule {
    const fields = ['cap', 'allow', 'rewrite'];
    if (value === null || value === undefined) return {};
    if (!isMapping(value)) throw this.fail(prefix.join('.'), `is ${describeKind(value)} but must be a mapping of ${oneOf(fields)}`);
    const rule: { cap?: number; allow?: string[]; rewrite?: Record<string, string> } = {};
    for (const [key, , inner] of this.entries(prefix, value)) {
      const where = `${[...prefix, key].join('.')}: ${show(inner)}`;
      if (key === 'cap') rule.cap = this.check(where, positiveWholeNumber, inner, 'a positive whole number');
      else if (key === 'allow') rule.allow = this.check(where, z.array(z.string()), inner, 'a list of label values (strings)');
      else if (key === 'rewrite') {
        // Checked by hand: a schema would rebuild the mapping on a plain object and lose a `__proto__` key.
        const strings = isMapping(inner) && Object.values(inner).every((value) => typeof value === 'string');
        if (!strings) throw new ConfigError(`${where} in the config file ${this.path} must be a mapping from label values to label values (strings).`);
        rule.rewrite = Object.fromEntries(Object.entries(inner as Record<string, string>));
      } else throw this.unknownKey(prefix, key, fields, []);
    }
    return rule;
  }

  private readBuckets(prefix: readonly string[], value: unknown): ConfigFile['buckets'] {
    const sets: Partial<Record<BucketSetName, readonly number[]>> = {};
    if (value === null || value === undefined) return sets;
    const names = Object.keys(DEFAULT_BUCKETS);
    if (!isMapping(value)) throw this.fail(prefix.join('.'), `is ${describeKind(value)} but must be a mapping of ${oneOf(names)} to bucket bounds`);
    const bounds = z
      .array(z.number().finite())
      .min(1)
      .refine((list) => list.every((bound, index) => index === 0 || bound > (list[index - 1] ?? -Infinity)));
    for (const [name, , inner] of this.entries(prefix, value)) {
      if (!names.includes(name)) throw this.unknownKey(prefix, name, names, []);
      const where = `${[...prefix, name].join('.')}: ${show(inner)}`;
      sets[name as BucketSetName] = this.check(where, bounds, inner, 'a non-empty list of finite numbers in strictly increasing order');
    }
    return sets;
  }

  /** prices: {<provider>: {<model>: {input, output, cache_read?, cache_write?}}}, USD per million tokens. */
  private readPrices(prefix: readonly string[], value: unknown): FilePrice[] {
    const prices: FilePrice[] = [];
    if (value === null || value === undefined) return prices;
    const perProvider = 'a mapping of providers to mappings of models to prices';
    if (!isMapping(value)) throw this.fail(prefix.join('.'), `is ${describeKind(value)} but must be ${perProvider}`);
    for (const [provider, models] of Object.entries(value)) {
      const providerPath = [...prefix, provider];
      if (provider === '') throw this.fail(providerPath.join('.'), 'has an empty provider name: expected a provider such as openrouter');
      if (!isMapping(models)) throw this.fail(providerPath.join('.'), `is ${describeKind(models)} but must be a mapping of models to prices`);
      for (const [model, price] of Object.entries(models)) {
        if (model === '') throw this.fail(providerPath.join('.'), 'has an empty model name: expected a model such as acme/model-a');
        prices.push(this.readPrice(provider, model, [...providerPath, model], price));
      }
    }
    return prices;
  }

  private readPrice(provider: string, model: string, prefix: readonly string[], value: unknown): FilePrice {
    const fields = ['input', 'output', 'cache_read', 'cache_write'];
    if (!isMapping(value)) throw this.fail(prefix.join('.'), `is ${describeKind(value)} but must be a mapping of ${oneOf(fields)}`);
    // Bounded so that a price times the largest token count summed over any number of calls stays finite.
    const usd = numberLike(z.number().finite().nonnegative().max(MAX_PRICE_PER_MILLION));
    const read: Record<string, number> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (!fields.includes(key)) throw this.unknownKey(prefix, key, fields, []);
      read[key] = this.check(`${[...prefix, key].join('.')}: ${show(inner)}`, usd, inner, `a price in USD per million tokens, from 0 to ${MAX_PRICE_PER_MILLION}`);
    }
    for (const required of ['input', 'output']) {
      if (read[required] === undefined) {
        throw this.fail([...prefix, required].join('.'), 'is missing: a price needs input and output (USD per million tokens)');
      }
    }
    return { provider, model, input: read.input ?? 0, output: read.output ?? 0, cacheRead: read.cache_read, cacheWrite: read.cache_write };
  }

  private check<T>(where: string, schema: z.ZodType<T>, value: unknown, expected: string): T {
    const result = schema.safeParse(value);
    if (!result.success) throw new ConfigError(`${where} in the config file ${this.path} must be ${expected}.`);
    return result.data;
  }
}

/** "Flow sequence … must end with a ] (line 2, column 1)": the parser's reason without its source excerpt. */
export function yamlProblem(error: unknown): string {
  if (!(error instanceof yaml().YAMLParseError)) return error instanceof Error ? error.message : String(error);
  const reason = error.message.split(' at line ')[0]?.trim() ?? error.code;
  const position = error.linePos?.[0];
  const at = position === undefined ? '' : ` (line ${position.line}, column ${position.col})`;
  return `${reason.charAt(0).toLowerCase()}${reason.slice(1)}${at}`;
}

/**
 * Parses and checks the file's text. `named` says how the file was named (`--config.file=… (from
 * the command line)`) for the errors about the file as a whole.
 */
export function readConfigFile(text: string, path: string, named: string, optionFlags: readonly string[]): ConfigFile {
  let parsed: unknown;
  try {
    parsed = yaml().parse(text, { logLevel: 'error' });
  } catch (error) {
    throw new ConfigError(`${named} names a file that is not valid YAML: ${yamlProblem(error)}.`);
  }
  if (parsed !== null && parsed !== undefined && !isMapping(parsed)) {
    throw new ConfigError(`${named} names a file that holds ${describeKind(parsed)}, but it must hold a mapping of settings such as "ingest: {queue_capacity: 2048}".`);
  }
  const reader = new FileReader(path, keyTree(optionFlags));
  reader.readSection(reader.root, [], parsed);
  return { path, settings: reader.settings, labels: reader.labels, buckets: reader.buckets, prices: reader.prices };
}
