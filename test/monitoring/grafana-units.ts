/**
 * Unit ids Grafana knows, as facts copied from its source: the categories of
 * grafana/grafana packages/grafana-data/src/valueFormats/categories.ts (commit
 * 002fa1b09fd5c809ef370334a20e23ec520ac8e3) a Hermes panel could use. A unit outside Grafana's
 * list (such as `suffix:tok/s`) is shown as a bare suffix with no scaling; the dashboard lint
 * allows only these.
 */
export const GRAFANA_UNITS: ReadonlySet<string> = new Set([
  // Misc
  'none', 'string', 'short', 'percent', 'percentunit', 'sci', 'locale',
  // Currency
  'currencyUSD', 'currencyGBP', 'currencyEUR', 'currencyJPY',
  // Data (IEC) and Data (metric)
  'bits', 'bytes', 'kbytes', 'mbytes', 'gbytes', 'tbytes', 'pbytes',
  'decbits', 'decbytes', 'deckbytes', 'decmbytes', 'decgbytes', 'dectbytes', 'decpbytes',
  // Data rate
  'pps', 'bps', 'Bps', 'KBs', 'Kbits', 'MBs', 'Mbits', 'GBs', 'Gbits',
  // Time
  'hertz', 'ns', 'µs', 'ms', 's', 'm', 'h', 'd', 'dtdurationms', 'dtdurations', 'dthms', 'dtdhms', 'timeticks', 'clockms', 'clocks',
  // Date & time
  'dateTimeAsIso', 'dateTimeAsIsoNoDateIfToday', 'dateTimeAsUS', 'dateTimeAsUSNoDateIfToday', 'dateTimeFromNow',
  // Throughput
  'cps', 'ops', 'reqps', 'rps', 'wps', 'iops', 'cpm', 'opm', 'rpm', 'wpm',
]);
