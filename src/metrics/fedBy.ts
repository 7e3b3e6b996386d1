/**
 * What feeds a family: the "fed by" column of docs/metrics.md. A family carries it in its own
 * declaration (`fed(counter(...), 'hermes', '...')`), so a new metric cannot ship without saying
 * what feeds it and says it in the one place it is declared; the catalogue (src/catalogue.ts)
 * checks every family carries one. The hook and field names live with the declarations, above the
 * contract; this module only knows the kinds of feed.
 *
 * `feed` says what a user of the tested Hermes release (contract/hooks.ts TESTED_HERMES, through
 * the bridge plugin) sees:
 *  - `hermes`: fed by hooks that release calls;
 *  - `partial`: some of its labels or series need a newer Hermes or a particular path;
 *  - `envelope`: fed only by the envelope variant (register_observer_hook), which no Hermes
 *    release has: the dashboards and rules do not show these;
 *  - `plugin` / `sidecar`: delivery and self metrics of this project.
 */
import type { MetricSpec } from './declare.js';

export type Feed = 'hermes' | 'partial' | 'envelope' | 'plugin' | 'sidecar';

export interface FedBy {
  readonly feed: Feed;
  /** Hooks and fields (Markdown). */
  readonly by: string;
}

/** A family's spec with what feeds it. */
export type FedSpec<S extends MetricSpec = MetricSpec> = S & { readonly fedBy: FedBy };

/** `spec`, saying what feeds it. */
export function fed<const S extends MetricSpec>(spec: S, feed: Feed, by: string): FedSpec<S> {
  return { ...spec, fedBy: { feed, by } };
}
