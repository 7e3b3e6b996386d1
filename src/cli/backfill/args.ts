/**
 * The `backfill` subcommand's arguments: which databases, which time range, where to write and
 * how finely counters are sampled. Every mistake is one sentence naming the option.
 */
import { closest } from '../../suggest.js';
import { BackfillError } from './errors.js';
import { DEFAULT_MAX_MEMORY_BYTES, MIN_MAX_MEMORY_BYTES, mebibytes, parseByteSize } from './memory.js';

export interface BackfillArgs {
  /** Explicit databases (--state-db, repeatable); empty means the default Hermes home and its profiles. */
  readonly stateDbs: readonly string[];
  /** Hermes home to scan when no --state-db is given. */
  readonly hermesHome: string | undefined;
  /** Range start in ms since the epoch; undefined means all history. */
  readonly fromMs: number | undefined;
  /** Range end in ms since the epoch (the last sample of every series). */
  readonly untilMs: number;
  readonly outDir: string;
  /** Sample step in ms: events are counted at the end of the step they fall into, like a scrape. */
  readonly stepMs: number;
  /** Labels every series carries so the bundle's selector matches it (job, instance and --label). */
  readonly extraLabels: readonly (readonly [string, string])[];
  /** Resident memory past which the run stops (--max-memory). */
  readonly maxMemoryBytes: number;
  readonly help: boolean;
}

export const BACKFILL_HELP = `Usage: hermes-prometheus-sidecar backfill [--state-db PATH]... [--from TIME] [--until TIME] [--out DIR] [--label NAME=VALUE]...

Read Hermes' session databases (read-only, safe while Hermes runs) and write their history as
OpenMetrics with timestamps to DIR/openmetrics/ (one file per 162 h block, built and written one
at a time, so memory follows the busiest week, not the length of the history); when promtool is
on the PATH, also turn it into Prometheus TSDB blocks in DIR/blocks and print how to copy them
into Prometheus' data directory with Prometheus' owner.
Every series carries source="backfill" and profile="<Hermes profile>".

Options:
  --state-db PATH    a session database (repeatable); default: $HERMES_HOME/state.db and
                     $HERMES_HOME/profiles/*/state.db ($HERMES_HOME defaults to ~/.hermes)
  --hermes-home DIR  the Hermes home to scan instead of $HERMES_HOME
  --from TIME        first moment to include (RFC 3339 or Unix seconds); default: all history
  --until TIME       last moment to include; default: now. Set it to when the sidecar's live
                     scrapes began, so history and live series never count the same call twice
  --out DIR          output directory (default: ./hermes-backfill; must not hold a backfill yet;
                     inside Prometheus' data directory only when run as its owner)
  --step SECONDS     sample step (default 15, a usual scrape interval): events count at the end
                     of their step, so rate() over four steps ($__rate_interval) sees them
  --label NAME=VALUE a label for every series (repeatable), so the monitoring bundle's selector
                     matches the history as it matches the live scrape; default job=hermes-sidecar
                     and instance=backfill
  --max-memory SIZE  stop with an error when the process's resident memory passes SIZE
                     (512Mi, 1Gi, 800MB; default 512Mi)
  -h, --help         show this help

Exit status: 0 done; 1 failed while running (a database unreadable, memory past --max-memory,
a write or promtool failed; nothing half-written is kept); 2 it could not start as asked (bad
arguments, an unusable --out, a missing database or one of a schema this version does not know).
`;

const OPTIONS_WITH_VALUE = ['--state-db', '--hermes-home', '--from', '--until', '--out', '--step', '--label', '--max-memory'] as const;
type ValueOption = (typeof OPTIONS_WITH_VALUE)[number];
const KNOWN = [...OPTIONS_WITH_VALUE, '--help', '-h'];

const MIN_STEP_SECONDS = 1;
const MAX_STEP_SECONDS = 86_400;

/** The last moment a time may name: 9999-12-31T23:59:59Z (beyond it dates have no RFC 3339 form). */
export const MAX_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/** RFC 3339 / ISO 8601 with a zone, or Unix seconds, from the epoch to the year 9999. */
export function parseTime(option: string, text: string): number {
  let ms = Number.NaN;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Math.round(Number(text) * 1000);
  else if (/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text)) ms = Date.parse(text);
  if (Number.isFinite(ms) && ms >= 0 && ms <= MAX_TIME_MS) return ms;
  throw new BackfillError('usage', `${option} must be an RFC 3339 time (2026-07-01T00:00:00Z) or Unix seconds, from 1970 to 9999.`);
}

function parseMaxMemory(text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_MEMORY_BYTES;
  const bytes = parseByteSize(text);
  if (bytes === undefined || bytes < MIN_MAX_MEMORY_BYTES) {
    throw new BackfillError('usage', `--max-memory must be a size of at least ${mebibytes(MIN_MAX_MEMORY_BYTES)}, such as 512Mi, 1Gi or 800MB.`);
  }
  return bytes;
}

/** Labels the history writes itself: --label cannot set them. */
export const RESERVED_LABELS = new Set(['source', 'profile', 'le', '__name__']);
const DEFAULT_EXTRA_LABELS: readonly (readonly [string, string])[] = [
  ['job', 'hermes-sidecar'],
  ['instance', 'backfill'],
];
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const MAX_LABEL_VALUE = 128;

function parseLabel(text: string): readonly [string, string] {
  const eq = text.indexOf('=');
  const name = eq > 0 ? text.slice(0, eq) : '';
  const value = text.slice(eq + 1);
  if (!LABEL_NAME.test(name) || name.startsWith('__') || RESERVED_LABELS.has(name)) {
    throw new BackfillError('usage', '--label must be NAME=VALUE with a Prometheus label name other than source, profile and le.');
  }
  if (value === '' || value.length > MAX_LABEL_VALUE || /\p{Cc}/u.test(value)) {
    throw new BackfillError('usage', `--label values must be 1 to ${MAX_LABEL_VALUE} characters without control characters.`);
  }
  return [name, value];
}

function extraLabels(given: readonly (readonly [string, string])[]): (readonly [string, string])[] {
  const byName = new Map<string, string>(DEFAULT_EXTRA_LABELS);
  const seen = new Set<string>();
  for (const [name, value] of given) {
    if (seen.has(name)) throw new BackfillError('usage', `--label ${name} is given more than once.`);
    seen.add(name);
    byName.set(name, value);
  }
  return [...byName];
}

function parseStep(text: string): number {
  const seconds = Number(text);
  if (!/^\d+$/.test(text) || seconds < MIN_STEP_SECONDS || seconds > MAX_STEP_SECONDS) {
    throw new BackfillError('usage', `--step must be a whole number of seconds from ${MIN_STEP_SECONDS} to ${MAX_STEP_SECONDS}.`);
  }
  return seconds * 1000;
}

/** Splits `--name=value` and `--name value`; refuses unknown names with a suggestion. */
function* options(argv: readonly string[]): Generator<{ name: string; value: string | undefined }> {
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] ?? '';
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (!KNOWN.includes(name)) {
      const meant = arg.startsWith('-') ? closest(name, KNOWN) : undefined;
      throw new BackfillError('usage', `${arg.startsWith('-') ? name : 'an argument'} is not an option${meant === undefined ? '.' : `: did you mean ${meant}?`}`);
    }
    if (!(OPTIONS_WITH_VALUE as readonly string[]).includes(name)) {
      yield { name, value: undefined };
      continue;
    }
    if (eq > 0) {
      yield { name, value: arg.slice(eq + 1) };
      continue;
    }
    const value = argv[index + 1];
    if (value === undefined) throw new BackfillError('usage', `${name} needs a value.`);
    index += 1;
    yield { name, value };
  }
}

export function parseBackfillArgs(argv: readonly string[], nowMs: number): BackfillArgs {
  const stateDbs: string[] = [];
  const labels: (readonly [string, string])[] = [];
  const single = new Map<ValueOption, string>();
  let help = false;
  for (const { name, value } of options(argv)) {
    if (value === undefined) {
      help = true;
    } else if (name === '--state-db') {
      stateDbs.push(value);
    } else if (name === '--label') {
      labels.push(parseLabel(value));
    } else {
      if (single.has(name as ValueOption)) throw new BackfillError('usage', `${name} is given more than once.`);
      single.set(name as ValueOption, value);
    }
  }
  const from = single.get('--from');
  const until = single.get('--until');
  const fromMs = from === undefined ? undefined : parseTime('--from', from);
  const untilMs = until === undefined ? nowMs : parseTime('--until', until);
  if (fromMs !== undefined && fromMs >= untilMs) throw new BackfillError('usage', '--from must be before --until.');
  return {
    stateDbs,
    hermesHome: single.get('--hermes-home'),
    fromMs,
    untilMs,
    outDir: single.get('--out') ?? 'hermes-backfill',
    stepMs: parseStep(single.get('--step') ?? '15'),
    extraLabels: extraLabels(labels),
    maxMemoryBytes: parseMaxMemory(single.get('--max-memory')),
    help,
  };
}
