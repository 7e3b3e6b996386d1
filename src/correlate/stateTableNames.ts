/**
 * The names of the correlation state tables (plugin instances and their parts, sessions, the span
 * tables): the `table` of hermes_sidecar_state_evictions_total, written by src/correlate/assemble.ts.
 */

/** The closed value sets of this module's labels. */
export const STATE_VALUES = {
  /** State tables that evict their oldest entry when full (in entries or in bytes). */
  state_table: [
    'plugin_instances',
    'sessions',
    'api_attempts',
    'tool_calls',
    'turns',
    'approvals',
    'subagents',
    /** Evicted plugin instances' tombstones (src/correlate/instances.ts). */
    'plugin_tombstones',
    /** An epoch's interval set full: its floor moved up past the lowest interval. */
    'plugin_intervals',
    /** Ranges of epochs pushed out of an instance's memory. */
    'plugin_epochs',
  ],
} as const satisfies Record<string, readonly string[]>;

export type StateTable = (typeof STATE_VALUES)['state_table'][number];
