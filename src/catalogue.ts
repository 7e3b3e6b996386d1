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
import { FED_BY } from './metrics/fedBy.js';

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
 * The order families are documented and exposed in: by subject (provider calls, turns, tools,
 * approvals, sessions, subagents, runs, delivery health, then the sidecar's own), not by writer.
 */
const ORDER = [
  'apiRequests',
  'apiRequestDuration',
  'apiTimeToFirstChunk',
  'apiErrors',
  'apiRetries',
  'apiRetriesExhausted',
  'tokens',
  'apiPromptTokens',
  'apiFinishReasons',
  'costUsd',
  'costUnpriced',
  'apiContextUtilization',
  'apiOutputTokensPerSecond',
  'apiRequestsInFlight',
  'turnsStarted',
  'turnsFinished',
  'turnDuration',
  'turnApiCalls',
  'turnToolCalls',
  'toolCalls',
  'toolCallDuration',
  'toolErrors',
  'toolCallsInFlight',
  'approvalRequests',
  'approvalDecisions',
  'approvalWait',
  'approvalsPending',
  'sessionsStarted',
  'sessionsFinalized',
  'sessionResets',
  'sessionsActive',
  'sessionEvents',
  'sessionCost',
  'sessionTokens',
  'sessionTurns',
  'sessionDuration',
  'subagentsStarted',
  'subagentsFinished',
  'subagentDuration',
  'subagentsActive',
  'agentInterrupts',
  'agentRuns',
  'agentRunDuration',
  'memoryWrites',
  'memoryWriteBytes',
  'genAiOperationDuration',
  'genAiTokenUsage',
  'pluginCallbacksDropped',
  'pluginInstances',
  'pluginInfo',
  'pluginValuesRefused',
  'pluginLastSeen',
  'eventsLost',
  'eventsLate',
  'eventsDuplicate',
  'sequenceResets',
  'eventsDiscarded',
  'heartbeatsStale',
  'heartbeatKeysFolded',
  'orphanedSpans',
  'sessionsInferred',
  'sessionsUnobserved',
  'outputSpeedUnmeasured',
  'firstChunkUnmeasured',
  'eventsReceived',
  'eventsRejected',
  'eventsDropped',
  'eventsIgnored',
  'lastEvent',
  'queueDepth',
  'queueCapacity',
  'queueEvents',
  'queueEventsCapacity',
  'ingestInflightBytes',
  'memoryPressure',
  'memoryLiveBytes',
  'valuesRejected',
  'ingestRequests',
  'ingestBatchEvents',
  'labelOverflow',
  'labelValuesCut',
  'labelCacheEvictions',
  'stateEvictions',
  'liveSeries',
  'seriesLimit',
  'seriesOverflow',
  'seriesExpired',
  'invalidValues',
  'nativeHalvings',
  'webAuthFailures',
  'scrapeErrors',
  'buildInfo',
  'connectionsClosed',
  'connectionsOpen',
  'scrapeAnswersDropped',
  'connectionsLimit',
  'scrapeRenders',
  'scrapesPaced',
  'connectionsStalled',
] as const satisfies readonly (keyof Declared)[];

/** `declared` with its keys in `order`, which must name each key once. */
function inOrder<D extends Declarations>(declared: D, order: readonly (keyof D & string)[]): D {
  const keys = Object.keys(declared);
  const missing = keys.filter((key) => !order.includes(key));
  if (missing.length > 0 || order.length !== keys.length) throw new Error(`the catalogue order does not list each family once: ${missing.join(', ')}`);
  return Object.fromEntries(order.map((key) => [key, declared[key]])) as unknown as D;
}

export const CATALOGUE: Declared = inOrder(DECLARED, ORDER);

export type Catalogue = Declared;
export type MetricKey = Extract<keyof Catalogue, string>;
/** Every family's handles: what the composition root holds and hands out by declaration. */
export type Metrics = Families<Catalogue>;

// Every family says what feeds it (docs/metrics.md, "fed by"), and nothing else does.
type Unfed = Exclude<MetricKey, keyof typeof FED_BY>;
type FedButUndeclared = Exclude<keyof typeof FED_BY, MetricKey>;
const everyFamilyFed: [Unfed, FedButUndeclared] extends [never, never] ? true : never = true;
void everyFamilyFed;

/** Every metric name the sidecar exports itself (prom-client default metrics aside). */
export const METRIC_NAMES: readonly string[] = Object.values(CATALOGUE as Record<string, MetricSpec>).map((spec) => spec.name);

/** Prefixes of the prom-client default metrics (process and Node.js runtime). */
export const DEFAULT_METRIC_PREFIXES = ['process_', 'nodejs_'] as const;

/** The registry of every catalogued family. */
export function createMetricsRegistry(options: RegistryOptions): MetricsRegistry<Metrics> {
  return createRegistry(CATALOGUE, options);
}
