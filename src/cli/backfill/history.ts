/**
 * The history's metric families and how each database row feeds them. Where a live metric means
 * the same, the history uses its name and labels (from the component's declaration) plus
 * `profile` and `source="backfill"`; everything else is a `hermes_history_*` family. Label values
 * pass the same guard as live ones (src/metrics/labels.ts: sanitizing, caps, `other` folding).
 */
import { API_FAMILIES } from '../../correlate/recorders/api.js';
import { SESSION_FAMILIES } from '../../correlate/recorders/sessions.js';
import type { MetricSpec } from '../../metrics/declare.js';
import { LabelGuard, type LabelGuardMetrics, type OpenLabel, defaultLabelRules } from '../../metrics/labels.js';
import type { MessageRow, SessionRow, UsageRow } from './read.js';
import { CounterSet, type Labels } from './series.js';

/** The label that tells history from live series, and its value. */
export const SOURCE_LABEL = 'source';
export const SOURCE_VALUE = 'backfill';

/** Session lengths: a minute to a week. */
export const SESSION_DURATION_BUCKETS = [60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 259200, 604800] as const;

export interface Family {
  readonly name: string;
  readonly type: 'counter' | 'histogram';
  /** The labels of its own, before profile, source and the extra labels (for docs/metrics.md). */
  readonly labels: readonly string[];
  readonly help: string;
}

const live = (spec: MetricSpec, note: string): Family => ({ name: spec.name, type: 'counter', labels: spec.labelNames, help: `${spec.help} ${note}` });

export const HISTORY_FAMILIES = {
  sessionsStarted: live(SESSION_FAMILIES.sessionsStarted, 'History: at sessions.started_at.'),
  tokens: live(API_FAMILIES.tokens, 'History: session_model_usage tokens at last_seen.'),
  costUsd: live(API_FAMILIES.costUsd, 'History: session_model_usage estimated_cost_usd (Hermes pricing) at last_seen.'),
  sessionsEnded: { name: 'hermes_history_sessions_ended_total', type: 'counter', labels: ['platform', 'end_reason'], help: 'History: sessions ended, by platform and Hermes end_reason, at sessions.ended_at.' },
  sessionDuration: { name: 'hermes_history_session_duration_seconds', type: 'histogram', labels: ['platform'], help: 'History: session duration (ended_at - started_at), at sessions.ended_at.' },
  sessionToolCalls: { name: 'hermes_history_session_tool_calls_total', type: 'counter', labels: ['platform'], help: 'History: tool calls per session (sessions.tool_call_count), at sessions.ended_at.' },
  apiCalls: { name: 'hermes_history_api_calls_total', type: 'counter', labels: ['kind', 'provider', 'model'], help: 'History: provider API calls (session_model_usage.api_call_count), at last_seen.' },
  toolCalls: { name: 'hermes_history_tool_calls_total', type: 'counter', labels: ['tool'], help: 'History: tool results by tool (messages with role tool), at the message timestamp.' },
  finishReasons: { name: 'hermes_history_finish_reasons_total', type: 'counter', labels: ['finish_reason'], help: 'History: messages by finish reason, at the message timestamp.' },
} as const satisfies Record<string, Family>;

/** Sample names of a family: a histogram writes three. */
export function sampleNames(family: Family): string[] {
  return family.type === 'histogram' ? [`${family.name}_bucket`, `${family.name}_count`, `${family.name}_sum`] : [family.name];
}

/** Why rows or values were left out; all are counted and printed, never their content. */
export interface Skipped {
  outsideRange: number;
  noTime: number;
  badValue: number;
}

/** Counts of the guard's bounds being hit, by label (printed in the summary). */
export class GuardCounts implements LabelGuardMetrics {
  readonly folded = new Map<OpenLabel, number>();
  readonly cut = new Map<OpenLabel, number>();
  readonly labelOverflow = { inc: ({ label }: { readonly label: OpenLabel }) => this.bump(this.folded, label) };
  readonly labelValuesCut = { inc: ({ label }: { readonly label: OpenLabel }) => this.bump(this.cut, label) };
  readonly labelCacheEvictions = { inc: () => undefined };

  private bump(map: Map<OpenLabel, number>, label: OpenLabel): void {
    map.set(label, (map.get(label) ?? 0) + 1);
  }
}

const TOKEN_TYPES = [
  ['input', 'input'],
  ['cache_read', 'cacheRead'],
  ['cache_write', 'cacheWrite'],
  ['output', 'output'],
  ['reasoning', 'reasoning'],
] as const;

/** A count or amount that can go into a counter: finite, ≥ 0 and exactly representable. */
const isAmount = (value: number): boolean => Number.isFinite(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER;

export class HistoryBuilder {
  readonly counters: CounterSet;
  readonly guardCounts = new GuardCounts();
  readonly skipped: Skipped = { outsideRange: 0, noTime: 0, badValue: 0 };
  private readonly guard: LabelGuard;

  constructor(
    private readonly range: {
      readonly fromMs: number | undefined;
      readonly untilMs: number;
      readonly stepMs: number;
      readonly extraLabels: readonly (readonly [string, string])[];
    },
  ) {
    this.counters = new CounterSet({ stepMs: range.stepMs, untilMs: range.untilMs });
    this.guard = new LabelGuard(defaultLabelRules(), this.guardCounts);
  }

  /** A session at its start. */
  sessionStarted(profile: string, row: SessionRow): void {
    const started = this.when(row.startedAt);
    if (started !== undefined) this.add(HISTORY_FAMILIES.sessionsStarted, profile, [['platform', this.label('platform', row.platform)]], started, 1);
  }

  /** A session at its end (read only for the sessions that have one). */
  sessionEnded(profile: string, row: SessionRow): void {
    if (row.endedAt === undefined) return;
    const ended = this.when(row.endedAt);
    if (ended === undefined) return;
    const platform = this.label('platform', row.platform);
    this.add(HISTORY_FAMILIES.sessionsEnded, profile, [['platform', platform], ['end_reason', this.label('reason', row.endReason)]], ended, 1);
    if (row.toolCalls !== undefined) this.amount(HISTORY_FAMILIES.sessionToolCalls, profile, [['platform', platform]], ended, row.toolCalls);
    if (row.startedAt !== undefined) this.duration(profile, platform, ended, row.endedAt - row.startedAt);
  }

  usage(profile: string, row: UsageRow): void {
    const at = this.when(row.lastSeen);
    if (at === undefined) return;
    const call: [string, string][] = [
      ['kind', row.task === undefined || row.task === '' ? 'main' : 'auxiliary'],
      ['provider', this.label('provider', row.provider)],
      ['model', this.label('model', row.model)],
    ];
    for (const [tokenType, field] of TOKEN_TYPES) {
      const tokens = row[field];
      if (tokens !== undefined) this.amount(HISTORY_FAMILIES.tokens, profile, [...call, ['token_type', tokenType]], at, tokens);
    }
    if (row.apiCalls !== undefined) this.amount(HISTORY_FAMILIES.apiCalls, profile, call, at, row.apiCalls);
    // As live: a subscription route is priced `included` at 0; Hermes' own estimate is `hermes`;
    // a call Hermes could not price has no cost series (live counts it as unpriced per call,
    // which the per-session totals cannot tell).
    if (row.costStatus === 'included') this.add(HISTORY_FAMILIES.costUsd, profile, [...call, ['pricing', 'included']], at, 0);
    else if (row.estimatedCostUsd !== undefined && row.estimatedCostUsd > 0) {
      this.amount(HISTORY_FAMILIES.costUsd, profile, [...call, ['pricing', 'hermes']], at, row.estimatedCostUsd);
    }
  }

  message(profile: string, row: MessageRow): void {
    const at = this.when(row.timestamp);
    if (at === undefined) return;
    if (row.role === 'tool') this.add(HISTORY_FAMILIES.toolCalls, profile, [['tool', this.label('tool', row.toolName)]], at, 1);
    if (row.finishReason !== undefined && row.finishReason !== '') {
      this.add(HISTORY_FAMILIES.finishReasons, profile, [['finish_reason', this.label('finish_reason', row.finishReason)]], at, 1);
    }
  }

  private duration(profile: string, platform: string, at: number, seconds: number): void {
    if (!isAmount(seconds)) {
      this.skipped.badValue += 1;
      return;
    }
    const name = HISTORY_FAMILIES.sessionDuration.name;
    const labels = (extra: [string, string][]) => this.labels(profile, [['platform', platform], ...extra]);
    for (const bound of SESSION_DURATION_BUCKETS) this.counters.add(`${name}_bucket`, labels([['le', String(bound)]]), at, seconds <= bound ? 1 : 0);
    this.counters.add(`${name}_bucket`, labels([['le', '+Inf']]), at, 1);
    this.counters.add(`${name}_count`, labels([]), at, 1);
    this.counters.add(`${name}_sum`, labels([]), at, seconds);
  }

  private amount(family: Family, profile: string, labels: [string, string][], at: number, value: number): void {
    if (!isAmount(value)) {
      this.skipped.badValue += 1;
      return;
    }
    this.add(family, profile, labels, at, value);
  }

  private add(family: Family, profile: string, labels: [string, string][], at: number, delta: number): void {
    this.counters.add(family.name, this.labels(profile, labels), at, delta);
  }

  private labels(profile: string, labels: [string, string][]): Labels {
    return [...labels, ['profile', this.label('profile', profile)], [SOURCE_LABEL, SOURCE_VALUE], ...this.range.extraLabels];
  }

  private label(label: OpenLabel, raw: string | undefined): string {
    return this.guard.value(label, raw);
  }

  /** Seconds since the epoch → ms (at least 1: no sample before the epoch), when inside the range; undefined (and counted) otherwise. */
  private when(seconds: number | undefined): number | undefined {
    const ms = seconds === undefined ? Number.NaN : Math.round(seconds * 1000);
    if (!Number.isFinite(ms) || ms < 1) {
      this.skipped.noTime += 1;
      return undefined;
    }
    if (ms > this.range.untilMs || (this.range.fromMs !== undefined && ms < this.range.fromMs)) {
      this.skipped.outsideRange += 1;
      return undefined;
    }
    return ms;
  }
}
