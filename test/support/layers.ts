/**
 * The layer of each stage of src/ (docs/architecture.md, "Stages"): a module may import from its
 * own stage or a lower layer. Root files not listed here are the composition root (top).
 */
export const LAYERS: Readonly<Record<string, number>> = {
  'clock.ts': 0,
  'errors.ts': 0,
  'lazyYaml.ts': 0,
  'log.ts': 0,
  'slices.ts': 0,
  'version.ts': 0,
  'wireText.ts': 0,
  metrics: 1,
  // The listeners' connection bounds: they need only the metrics.
  net: 2,
  contract: 3,
  correlate: 4,
  exposition: 5,
  ingest: 6,
  web: 7,
};
