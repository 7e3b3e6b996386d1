/**
 * Label values: sanitizing, closed enumerations and the cardinality guard.
 *
 * Every label is always set: missing or empty becomes `unknown`. Closed enumerations map any value
 * outside their list to `other`. Open sets keep their first N distinct values per label; later
 * new values fold into `other`, and each fold is counted.
 */

export const UNKNOWN = 'unknown';
export const OTHER = 'other';
export type Fallback = typeof UNKNOWN | typeof OTHER;

const MAX_LABEL_LENGTH = 128;
// Control characters (C0, DEL, C1) never belong in a label value; removing them also keeps
// NUL free for the series keys the storage builds from label values.
const CONTROL_CHARACTERS = /\p{Cc}/gu;

/** Trims, strips control characters, truncates and repairs lone surrogates; '' when nothing is left. */
export function sanitizeLabelValue(raw: string): string {
  let value = raw.replace(CONTROL_CHARACTERS, '').trim();
  if (value.length > MAX_LABEL_LENGTH) value = value.slice(0, MAX_LABEL_LENGTH).trimEnd();
  // Lone surrogates would all render as U+FFFD and so merge distinct series in the output.
  return value.toWellFormed();
}

/**
 * A value of a closed set (declared in the catalogue's VALUES): itself when listed, `other` when
 * not, `unknown` when absent.
 */
export function closedLabel<const V extends string>(allowed: ReadonlySet<V>, raw: string | undefined): V | Fallback {
  if (raw === undefined) return UNKNOWN;
  const value = raw.trim();
  if (value === '') return UNKNOWN;
  return (allowed as ReadonlySet<string>).has(value) ? (value as V) : OTHER;
}

/** Open label sets guarded by a per-label cap (docs/metrics.md, "Label caps"). */
export const DEFAULT_LABEL_CAPS = {
  provider: 64,
  model: 256,
  tool: 256,
  platform: 32,
  reason: 64,
  error_class: 32,
  status_code: 64,
  pattern_key: 128,
  exit_reason: 64,
  finish_reason: 64,
  role: 32,
  stop_reason: 32,
  memory_provider: 32,
  action: 32,
  interrupt_reason: 32,
  hermes_version: 32,
  plugin_version: 16,
  profile: 64,
} as const;

export type OpenLabel = keyof typeof DEFAULT_LABEL_CAPS;
export const OPEN_LABELS = Object.keys(DEFAULT_LABEL_CAPS) as OpenLabel[];

/** Per-label settings from the config file. */
export interface LabelRule {
  readonly cap: number;
  /** When set, only these values (after rewriting) pass; anything else folds into `other`. */
  readonly allow?: readonly string[];
  /** Exact-value rewrites applied before the allow-list and the cap. */
  readonly rewrite?: Readonly<Record<string, string>>;
}

export type LabelRules = Readonly<Record<OpenLabel, LabelRule>>;

export const defaultLabelRules = (): LabelRules =>
  Object.fromEntries(OPEN_LABELS.map((label) => [label, { cap: DEFAULT_LABEL_CAPS[label] }])) as LabelRules;

interface GuardState {
  readonly rule: LabelRule;
  readonly allow: ReadonlySet<string> | undefined;
  readonly rewrite: ReadonlyMap<string, string>;
  readonly admitted: Set<string>;
  /** Raw value → exported value, for values that were not folded: the hot path skips sanitizing. */
  readonly resolved: Map<string, string>;
}

/** Raw spellings remembered per label; past this, new ones take the slow path (still correct). */
const MAX_RESOLVED_PER_LABEL = 4096;

export class LabelGuard {
  private readonly states: Record<OpenLabel, GuardState>;

  constructor(
    rules: LabelRules,
    /** The guard's own counter: each fold into `other` counts once. */
    private readonly metrics: { readonly labelOverflow: { inc(labels: { readonly label: OpenLabel }): void } },
  ) {
    this.states = Object.fromEntries(
      OPEN_LABELS.map((label) => {
        const rule = rules[label];
        const state: GuardState = {
          rule,
          allow: rule.allow === undefined ? undefined : new Set(rule.allow),
          rewrite: new Map(Object.entries(rule.rewrite ?? {})),
          admitted: new Set(),
          resolved: new Map(),
        };
        return [label, state];
      }),
    ) as Record<OpenLabel, GuardState>;
  }

  /** The exported value of an open label: sanitized, rewritten, allow-listed and capped. */
  value(label: OpenLabel, raw: string | undefined): string {
    if (raw === undefined) return UNKNOWN;
    const state = this.states[label];
    const known = state.resolved.get(raw);
    if (known !== undefined) return known;
    const value = this.resolve(label, state, raw);
    if (value !== undefined) {
      if (state.resolved.size < MAX_RESOLVED_PER_LABEL) state.resolved.set(raw, value);
      return value;
    }
    this.metrics.labelOverflow.inc({ label });
    return OTHER;
  }

  /** The exported value, or undefined when the value folds into `other` (allow-list or cap). */
  private resolve(label: OpenLabel, state: GuardState, raw: string): string | undefined {
    let value = sanitizeLabelValue(label === 'provider' ? raw.toLowerCase() : raw);
    if (value === '') return UNKNOWN;
    value = state.rewrite.get(value) ?? value;
    if (value === UNKNOWN || value === OTHER || state.admitted.has(value)) return value;
    if (state.allow !== undefined && !state.allow.has(value)) return undefined;
    if (state.admitted.size >= state.rule.cap) return undefined;
    state.admitted.add(value);
    return value;
  }
}
