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
import type { FedBy, FedSpec } from './metrics/fedBy.js';

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

// Every family says what feeds it, in its declaration (metrics/fedBy.ts `fed`).
type Unfed = { [K in MetricKey]: Catalogue[K] extends { readonly fedBy: FedBy } ? never : K }[MetricKey];
const everyFamilyFed: [Unfed] extends [never] ? true : never = true;
void everyFamilyFed;

/** What feeds each family (docs/metrics.md, "fed by"), in catalogue order. */
export const FED_BY: Readonly<Record<MetricKey, FedBy>> = Object.fromEntries(
  (Object.keys(CATALOGUE) as MetricKey[]).map((key) => [key, (CATALOGUE[key] as FedSpec).fedBy]),
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
