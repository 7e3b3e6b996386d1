/**
 * Label values: sanitizing, closed enumerations and the cardinality guard.
 *
 * Every label is always set: missing or empty becomes `unknown`. Closed enumerations map any value
 * outside their list to `other`. Open sets keep their first N distinct values per label; later
 * new values fold into `other`, and each fold is counted.
 */
import { counter, type Declarations } from './declare.js';
import { fed } from './fedBy.js';
import type { LabelAdmission } from './seriesTable.js';
import { cutToBytes, DEFAULT_MAX_RAW_LABEL_BYTES, fitsBytes, OTHER, UNKNOWN, type Fallback } from '../wireText.js';

/** The longest guarded label value, in UTF-16 code units (a longer one is cut). */
export const MAX_LABEL_LENGTH = 128;
/** Longer than any closed value plus the whitespace a sender may wrap it in. */
const MAX_CLOSED_LENGTH = 256;
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
  // No closed value is this long: not worth trimming or hashing.
  if (raw.length > MAX_CLOSED_LENGTH) return OTHER;
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
  /**
   * The first N distinct values, each with how many live series carry it: what the cap counts.
   * Values leave when no series carries them any more (retain/release).
   */
  readonly admitted: Map<string, number>;
  /** Admitted values no series carries, since the first sweep that found them so. */
  readonly unusedSince: Map<string, number>;
  /** Values released since the last sweep: their cached spellings are forgotten then. */
  readonly released: Set<string>;
  /** Raw value (cut to the byte limit) → exported value, for values that were not folded: the hot path skips sanitizing. */
  readonly resolved: SpellingCache;
}

/**
 * Raw spellings remembered per label: a few per admitted value (case, whitespace, rewrites),
 * never more than MAX_SPELLINGS. Past that the least recently used is forgotten (counted) and
 * resolved again if it returns, with the same result.
 */
const SPELLINGS_PER_VALUE = 4;
const MIN_SPELLINGS = 64;
const MAX_SPELLINGS = 4096;

export const spellingCapacity = (cap: number): number => Math.min(MAX_SPELLINGS, SPELLINGS_PER_VALUE * cap + MIN_SPELLINGS);

/**
 * A bounded map of raw spellings to exported values, evicting by the clock (second-chance)
 * policy: a hit only marks its entry, so the hot path writes no Map; eviction skips (and
 * unmarks) recently used entries, oldest first.
 */
class SpellingCache {
  private readonly entries = new Map<string, { readonly value: string; used: boolean }>();

  constructor(
    private readonly capacity: number,
    private readonly onEvict: () => void,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  /** Drops every spelling that resolves to one of `values`. */
  forget(values: ReadonlySet<string>): void {
    for (const [raw, entry] of this.entries) if (values.has(entry.value)) this.entries.delete(raw);
  }

  get(raw: string): string | undefined {
    const entry = this.entries.get(raw);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }

  set(raw: string, value: string): void {
    if (this.entries.size >= this.capacity) this.evictOne();
    this.entries.set(raw, { value, used: false });
  }

  private evictOne(): void {
    // Each marked entry moves to the back unmarked, so this ends within capacity + 1 steps.
    for (const [raw, entry] of this.entries) {
      this.entries.delete(raw);
      if (!entry.used) {
        this.onEvict();
        return;
      }
      entry.used = false;
      this.entries.set(raw, entry);
    }
  }
}

/**
 * The counters the guard writes, keyed by its own declaration (LABEL_GUARD_FAMILIES, at the end
 * of this module): each fold into `other`, each raw value cut to the byte limit, each spelling
 * forgotten by a full cache counts once.
 */
export type LabelGuardMetrics = {
  readonly [K in keyof typeof LABEL_GUARD_FAMILIES]: { inc(labels: { readonly label: OpenLabel }): void };
};

const OPEN_LABEL_SET: ReadonlySet<string> = new Set(OPEN_LABELS);
const isOpenLabel = (label: string): label is OpenLabel => OPEN_LABEL_SET.has(label);

/**
 * Caps each open label at its first N distinct values. Built by the registry on its own storage
 * (src/metrics/registry.ts), which tells it when a series carrying a value is created or removed
 * (LabelAdmission): a value no live series carries goes back to the cap, so after series expire
 * new values are admitted again, and never more than N at once.
 */
export class LabelGuard implements LabelAdmission {
  private readonly states: Record<OpenLabel, GuardState>;
  private forgotten = 0;

  constructor(
    rules: LabelRules,
    private readonly metrics: LabelGuardMetrics,
    /** Raw values are cut to this many UTF-8 bytes before they are cached, hashed or sanitized. */
    private readonly maxRawBytes: number = DEFAULT_MAX_RAW_LABEL_BYTES,
  ) {
    this.states = Object.fromEntries(
      OPEN_LABELS.map((label) => {
        const rule = rules[label];
        const state: GuardState = {
          rule,
          allow: rule.allow === undefined ? undefined : new Set(rule.allow),
          rewrite: new Map(Object.entries(rule.rewrite ?? {})),
          admitted: new Map(),
          unusedSince: new Map(),
          released: new Set(),
          resolved: new SpellingCache(spellingCapacity(rule.cap), () => metrics.labelCacheEvictions.inc({ label })),
        };
        return [label, state];
      }),
    ) as Record<OpenLabel, GuardState>;
  }

  /** The exported value of an open label: cut to the byte limit, sanitized, rewritten, allow-listed and capped. */
  value(label: OpenLabel, raw: string | undefined): string {
    if (raw === undefined) return UNKNOWN;
    const state = this.states[label];
    const bounded = this.bounded(label, raw);
    const known = state.resolved.get(bounded);
    // A released value keeps its cached spellings until the next sweep; a series made with one
    // meanwhile would carry a value the cap no longer counts, so it is admitted (or folded) afresh.
    if (known !== undefined && (state.released.size === 0 || !state.released.has(known))) return known;
    const value = this.resolve(label, state, bounded);
    if (value !== undefined) {
      state.resolved.set(bounded, value);
      return value;
    }
    this.metrics.labelOverflow.inc({ label });
    return OTHER;
  }

  /** The raw spellings cached for a label (for tests and debugging: their number and length are bounded). */
  cachedSpellings(label: OpenLabel): readonly string[] {
    return [...this.states[label].resolved.keys()];
  }

  private bounded(label: OpenLabel, raw: string): string {
    if (fitsBytes(raw, this.maxRawBytes)) return raw;
    this.metrics.labelValuesCut.inc({ label });
    return cutToBytes(raw, this.maxRawBytes);
  }

  /** The exported value, or undefined when the value folds into `other` (allow-list or cap). */
  private resolve(label: OpenLabel, state: GuardState, raw: string): string | undefined {
    let value = sanitizeLabelValue(label === 'provider' ? raw.toLowerCase() : raw);
    if (value === '') return UNKNOWN;
    value = state.rewrite.get(value) ?? value;
    if (value === UNKNOWN || value === OTHER || state.admitted.has(value)) return value;
    return this.admit(state, value) ? value : undefined;
  }

  /** Adds `value` to the cap's set, if the allow-list and the cap let it. */
  private admit(state: GuardState, value: string): boolean {
    if (state.allow !== undefined && !state.allow.has(value)) return false;
    if (state.admitted.size >= state.rule.cap) return false;
    state.admitted.set(value, 0);
    state.released.delete(value);
    return true;
  }

  /**
   * A new series carries `value`: one more reference. Values outside the cap's set (known values
   * a recorder passes uncapped, `unknown`, `other`) are not counted.
   */
  retain(label: string, value: string): void {
    if (!isOpenLabel(label)) return;
    const state = this.states[label];
    const refs = state.admitted.get(value);
    if (refs === undefined) return;
    state.admitted.set(value, refs + 1);
    if (refs === 0) state.unusedSince.delete(value);
  }

  /** A series carrying `value` left; with its last one, the value leaves the cap. */
  release(label: string, value: string): void {
    if (!isOpenLabel(label)) return;
    const state = this.states[label];
    const refs = state.admitted.get(value);
    if (refs === undefined || refs === 0) return;
    if (refs > 1) {
      state.admitted.set(value, refs - 1);
      return;
    }
    state.admitted.delete(value);
    state.released.add(value);
  }

  /**
   * Moves whenever the guard forgets values (at a sweep): what a caller keeps keyed by guarded
   * values (a recorder's resolved series handles) is stale once it moved, and dropping it then
   * keeps such a cache within the caps however values come and go.
   */
  get generation(): number {
    return this.forgotten;
  }

  /** How many values of `label` the cap holds now. */
  admittedCount(label: OpenLabel): number {
    return this.states[label].admitted.size;
  }

  /**
   * Run by the expiry sweep: forgets the cached spellings of released values (so they are
   * resolved, and admitted, afresh) and releases values admitted without any series carrying
   * them for `ttlSeconds` (resolved while the series budget was spent, say).
   */
  sweep(now: number, ttlSeconds: number): void {
    for (const label of OPEN_LABELS) {
      const state = this.states[label];
      for (const [value, refs] of state.admitted) {
        if (refs > 0) continue;
        const since = state.unusedSince.get(value);
        if (since === undefined) state.unusedSince.set(value, now);
        if (now - (since ?? now) < ttlSeconds) continue;
        state.admitted.delete(value);
        state.unusedSince.delete(value);
        state.released.add(value);
      }
      if (state.released.size === 0) continue;
      state.resolved.forget(state.released);
      state.released.clear();
      this.forgotten += 1;
    }
  }
}

/** The families this module writes (and all it is handed). */
export const LABEL_GUARD_FAMILIES = {
  labelOverflow: fed(counter('hermes_sidecar_label_overflow_total', { label: OPEN_LABELS }, 'self',
    'Label values folded into "other" by the cardinality guard.'),
    'sidecar', 'label guard'),
  labelValuesCut: fed(counter('hermes_sidecar_label_values_cut_total', { label: OPEN_LABELS }, 'self',
    'Raw label values longer than --ingest.max-label-value-bytes that reached the label guard and were cut to it before sanitizing (the event readers already refuse such names, so this stays 0 unless a new caller skips them).'),
    'sidecar', 'label guard'),
  labelCacheEvictions: fed(counter('hermes_sidecar_label_cache_evictions_total', { label: OPEN_LABELS }, 'self',
    'Raw spellings dropped from the label guard\'s bounded cache of resolved values (least recently used first); an evicted spelling is resolved again, with the same result, when it returns.'),
    'sidecar', 'label guard'),
} as const satisfies Declarations;
