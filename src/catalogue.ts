/**
 * The metric catalogue: the product's public contract (docs/metrics.md is generated from it).
 *
 * Each component declares the families it writes next to the code that writes them, and is
 * handed only those (their handles are typed from its declaration object, so a write to a family
 * it did not declare does not type-check). This module, at the composition root because it
 * imports components of every stage, gathers the declarations into one catalogue: the registry is
 * built from it, and docs/metrics.md, the dashboards' and rules' name checks and the series budget
 * read it. Input never creates a metric name.
 */
import { BUILD_FAMILIES } from './buildInfo.js';
import { PIPELINE_FAMILIES } from './correlate/assemble.js';
import { INGEST_FAMILIES } from './ingest/app.js';
import { CONNECTION_FAMILIES } from './net/connections.js';
import { mergeDeclarations, type Declarations, type MetricSpec } from './metrics/declare.js';
import { createRegistry, REGISTRY_FAMILIES, type Families, type MetricsRegistry, type RegistryOptions } from './metrics/registry.js';
import { WEB_APP_FAMILIES } from './web/app.js';
import { WEB_SERVER_FAMILIES } from './web/server.js';
import type { FedBy } from './metrics/fedBy.js';
import { TESTED_HERMES } from './contract/hooks.js';

const DECLARED = mergeDeclarations(
  PIPELINE_FAMILIES,
  INGEST_FAMILIES,
  WEB_APP_FAMILIES,
  WEB_SERVER_FAMILIES,
  CONNECTION_FAMILIES,
  REGISTRY_FAMILIES,
  BUILD_FAMILIES,
);

type Declared = typeof DECLARED;

/**
 * The order families are documented and exposed in: by scope (what Hermes does, delivery health,
 * the sidecar's own), then in the order their components are gathered, each of which declares its
 * own by subject (provider calls, turns, tools, approvals, sessions, subagents, runs; ingest,
 * queue, memory, scrapes, connections, storage). A new family takes its place beside its writer's.
 */
const SCOPES: readonly MetricSpec['scope'][] = ['agent', 'delivery', 'self'];

/** `declared` with its keys in scope order, each scope's keys in their declared order. */
function inScopeOrder<D extends Declarations>(declared: D): D {
  const rank = ([, spec]: [string, MetricSpec]): number => SCOPES.indexOf(spec.scope);
  // Array.prototype.sort is stable: within a scope the gathered order stands.
  return Object.fromEntries(Object.entries(declared).sort((a, b) => rank(a) - rank(b))) as unknown as D;
}

export const CATALOGUE: Declared = inScopeOrder(DECLARED);

export type Catalogue = Declared;
export type MetricKey = Extract<keyof Catalogue, string>;
/** Every family's handles: what the composition root holds and hands out by declaration. */
export type Metrics = Families<Catalogue>;

const AUXILIARY = '`kind="auxiliary"` needs `pre/post_auxiliary_call` (newer Hermes; not in VALID_HOOKS of ' + TESTED_HERMES + ')';

/**
 * What feeds the families whose declarations do not carry it yet, because their modules
 * (correlate/recorders/api.ts, plugins.ts, context.ts, correlate/assemble.ts, dispatcher.ts,
 * ingest/memory.ts, metrics/labels.ts, registry.ts, net/connections.ts, web/app.ts, web/server.ts)
 * are being reworked on other branches: each entry moves into its declaration as `fed(...)`, and
 * this table goes once it is empty.
 */
const FEEDS_OUTSIDE_DECLARATIONS = {
  apiRequests: { feed: 'hermes', by: `\`post_api_request\` (success), \`api_request_error\` (error); ${AUXILIARY}` },
  apiRequestDuration: { feed: 'hermes', by: '`api_duration` (s) of `post_api_request` / `api_request_error`' },
  apiTimeToFirstChunk: { feed: 'partial', by: '`first_chunk_at` − `started_at` of `post_api_request` (`outcome="success"`); `outcome="error"` from `api_request_error`\'s `first_chunk_at`, which Hermes 0.21 passes (agent/api_request_hooks.py); streamed calls only, and only the first attempt of a call to end (later ones count in hermes_sidecar_time_to_first_chunk_unmeasured_total)' },
  apiErrors: { feed: 'hermes', by: '`api_request_error`: `reason`, `error_type` (the plugin forwards `error["type"]`) as `error_class`, `status_code`, `retryable`' },
  apiRetries: { feed: 'hermes', by: '`api_request_error`: `retryable`, `retry_count`, `max_retries`' },
  apiRetriesExhausted: { feed: 'hermes', by: '`api_request_error`: `retryable`, `retry_count`, `max_retries`' },
  tokens: { feed: 'hermes', by: '`post_api_request` `usage` (`_usage_summary_for_api_request_hook`): `input_tokens`, `cache_read_tokens`, `cache_write_tokens`, `output_tokens`, `reasoning_tokens`; a type whose `usage.reported_usage_fields` flag is false (Hermes 0.21) is not counted, not counted as 0' },
  apiPromptTokens: { feed: 'hermes', by: '`post_api_request` `usage.prompt_tokens`' },
  apiFinishReasons: { feed: 'hermes', by: '`post_api_request` `finish_reason`' },
  costUsd: { feed: 'hermes', by: '`post_api_request`: `cost_usd`/`cost_status` (the plugin\'s sender thread, Hermes\' `agent.usage_pricing.estimate_usage_cost`), else `usage` × the config file\'s `prices:`' },
  costUnpriced: { feed: 'hermes', by: '`post_api_request` without `cost_usd` and without a `prices:` entry, or without `usage`' },
  apiContextUtilization: { feed: 'partial', by: '`post_api_request`: prompt tokens of `usage` / `context_length`, which only Hermes after 0.21.3 passes (agent/turn_response_intake.py on main)' },
  apiOutputTokensPerSecond: { feed: 'hermes', by: '`post_api_request`: `usage.output_tokens` / (`api_duration` − (`first_chunk_at` − `started_at`)); streamed calls only' },
  apiRequestsInFlight: { feed: 'hermes', by: '`pre_api_request` → `post_api_request` / `api_request_error` by `api_request_id`' },
  genAiOperationDuration: { feed: 'hermes', by: '`api_duration` (s) of `post_api_request` / `api_request_error` (`reason` as `error_type`); with `--metrics.semconv`' },
  genAiTokenUsage: { feed: 'hermes', by: '`post_api_request` `usage`: `prompt_tokens` (else input + cache read + cache write) as input, `output_tokens` as output; with `--metrics.semconv`' },
  pluginInfo: { feed: 'plugin', by: '`plugin_heartbeat`: `hermes_version`, `plugin_version`, `profile` (Hermes 0.21 `ctx.profile_name`) of the instances whose heartbeat is live' },
  pluginValuesRefused: { feed: 'plugin', by: '`plugin_heartbeat` `refused_fields` (deltas per plugin instance)' },
  orphanedSpans: { feed: 'sidecar', by: 'span tables (TTL and size bound)' },
  firstChunkUnmeasured: { feed: 'sidecar', by: '`api_request_error` or `post_api_request` with `first_chunk_at` whose `api_request_id` had a failed attempt before' },
  outputSpeedUnmeasured: { feed: 'sidecar', by: '`post_api_request` with `first_chunk_at` but no positive time after it, or no `usage.output_tokens`' },
  eventsIgnored: { feed: 'sidecar', by: 'ingest: hooks with no metric mapping' },
  lastEvent: { feed: 'sidecar', by: 'ingest' },
  memoryPressure: { feed: 'sidecar', by: 'memory guard' },
  memoryLiveBytes: { feed: 'sidecar', by: 'memory guard' },
  memoryOverLimit: { feed: 'sidecar', by: 'memory guard' },
  memorySeriesShed: { feed: 'sidecar', by: 'memory guard (early expiry of the longest-idle series)' },
  valuesRejected: { feed: 'sidecar', by: 'numeric fields of any event, durations between two `observed_at`, and ids and names of any event or webhook delivery' },
  webAuthFailures: { feed: 'sidecar', by: 'web listener basic auth' },
  labelOverflow: { feed: 'sidecar', by: 'label guard' },
  labelValuesCut: { feed: 'sidecar', by: 'label guard' },
  labelCacheEvictions: { feed: 'sidecar', by: 'label guard' },
  stateEvictions: { feed: 'sidecar', by: 'state tables' },
  liveSeries: { feed: 'sidecar', by: 'series storage' },
  invalidValues: { feed: 'sidecar', by: 'series storage: values refused as not finite or negative' },
  nativeHalvings: { feed: 'sidecar', by: 'series storage: native histogram buckets past --metrics.native-histogram-max-buckets' },
  seriesLimit: { feed: 'sidecar', by: 'configuration' },
  seriesOverflow: { feed: 'sidecar', by: 'series storage' },
  seriesExpired: { feed: 'sidecar', by: 'the expiry sweep (`--metrics.series-ttl`, every `--correlator.sweep-interval`)' },
  seriesBytes: { feed: 'sidecar', by: 'series storage' },
  seriesBytesLimit: { feed: 'sidecar', by: 'configuration' },
  seriesBytesRefused: { feed: 'sidecar', by: 'series storage' },
  scrapeErrors: { feed: 'sidecar', by: '/metrics' },
  connectionsClosed: { feed: 'sidecar', by: 'web and ingest listeners' },
  connectionsOpen: { feed: 'sidecar', by: 'web and ingest listeners' },
  connectionsLimit: { feed: 'sidecar', by: 'configuration' },
  scrapeAnswersDropped: { feed: 'sidecar', by: '/metrics' },
  scrapeRenders: { feed: 'sidecar', by: '/metrics' },
  scrapesPaced: { feed: 'sidecar', by: '/metrics' },
  connectionsStalled: { feed: 'sidecar', by: 'web and ingest listeners' },
  requestsDelayed: { feed: 'sidecar', by: 'web and ingest listeners (per-connection request rate)' },
} as const satisfies Record<string, FedBy>;

// Every family says what feeds it, once: in its declaration or (for now) in the table above.
type FedInDeclaration = { [K in MetricKey]: Catalogue[K] extends { readonly fedBy: FedBy } ? K : never }[MetricKey];
type FedOutside = keyof typeof FEEDS_OUTSIDE_DECLARATIONS;
type Unfed = Exclude<MetricKey, FedInDeclaration | FedOutside>;
type FedTwice = Extract<FedInDeclaration, FedOutside>;
type FedButUndeclared = Exclude<FedOutside, MetricKey>;
const everyFamilyFedOnce: [Unfed, FedTwice, FedButUndeclared] extends [never, never, never] ? true : never = true;
void everyFamilyFedOnce;

function feedOf(key: MetricKey): FedBy {
  const declared = (CATALOGUE[key] as MetricSpec & { readonly fedBy?: FedBy }).fedBy;
  const fedBy = declared ?? (FEEDS_OUTSIDE_DECLARATIONS as Readonly<Record<string, FedBy>>)[key];
  if (fedBy === undefined) throw new Error(`the family ${key} does not say what feeds it`);
  return fedBy;
}

/** What feeds each family (docs/metrics.md, "fed by"), in catalogue order. */
export const FED_BY: Readonly<Record<MetricKey, FedBy>> = Object.fromEntries(
  (Object.keys(CATALOGUE) as MetricKey[]).map((key) => [key, feedOf(key)]),
) as Record<MetricKey, FedBy>;

/** Metrics no Hermes release feeds (envelope variant only): not on the dashboards, not in rules. */
export const ENVELOPE_ONLY_METRICS: readonly MetricKey[] = (Object.keys(FED_BY) as MetricKey[]).filter((key) => FED_BY[key].feed === 'envelope');

/** Every metric name the sidecar exports itself (prom-client default metrics aside). */
export const METRIC_NAMES: readonly string[] = Object.values(CATALOGUE as Record<string, MetricSpec>).map((spec) => spec.name);

/** Prefixes of the prom-client default metrics (process and Node.js runtime). */
export const DEFAULT_METRIC_PREFIXES = ['process_', 'nodejs_'] as const;

/** The registry of every catalogued family. */
export function createMetricsRegistry(options: RegistryOptions): MetricsRegistry<Metrics> {
  return createRegistry(CATALOGUE, options);
}
