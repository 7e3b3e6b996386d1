/**
 * "Hermes sidecar health": is the pipeline from Hermes to Prometheus complete?
 *
 * Delivery health first (every lost or dropped event is a data-loss incident, not a no-op),
 * then ingest and queue saturation (USE), then the sidecar process itself.
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  ANY_INCREASE,
  COLORS,
  neutral,
  redBelow,
  redFrom,
} from './thresholds.js';
import {
  buildDashboard,
  datasourceVariable,
  instanceVariable,
  jobVariable,
  stat,
  sumBy,
  timeseries,
  upDownMapping,
  promql,
  type Promql,
  type RowSpec,
} from './common.js';
import type { MonitoringConfig } from '../config.js';

export const SIDECAR_HEALTH_UID = 'hermes-sidecar-health';

/** Seconds since a timestamp gauge moved; `max` picks the freshest selected sidecar. */
function ageOf(q: Promql, timestampGauge: string): string {
  return `time() - max(${q.selected(timestampGauge)})`;
}

/** A plugin instance counts as stale after three missed heartbeats at the plugin's default 5 s interval. */
const PLUGIN_STALE_SECONDS = 15;

const status = (q: Promql, { thresholds }: MonitoringConfig): RowSpec => ({
  title: 'Status',
  panels: [
    stat({
      title: 'Scrape status',
      description: 'Whether Prometheus scrapes every selected sidecar (the lowest "up" value); DOWN means metrics and alerts are blind.',
      unit: 'none',
      width: 3,
      mappings: [upDownMapping()],
      thresholds: redBelow(1),
      queries: [{ expr: `min(${q.selected('up')})`, legend: 'up' }],
    }),
    stat({
      title: 'Build',
      description: 'Sidecar version and Node.js version of the selected sidecars.',
      unit: 'none',
      width: 5,
      show: 'name',
      thresholds: neutral(),
      queries: [
        {
          expr: q.selected('hermes_sidecar_build_info'),
          legend: '{{version}} (node {{node_version}})',
          instant: true,
        },
      ],
    }),
    stat({
      title: 'Time since last event',
      description: 'Seconds since the newest event was applied. Hermes idles between turns, so compare with plugin heartbeats before worrying.',
      unit: 's',
      width: 3,
      // Hermes idles between turns: an old last event is no fault by itself.
      thresholds: neutral(),
      queries: [{ expr: ageOf(q, 'hermes_sidecar_last_event_timestamp_seconds'), legend: 'age' }],
    }),
    stat({
      title: 'Plugin last seen',
      description: `Seconds since the newest heartbeat or event from any bridge plugin instance; orange past ${String(PLUGIN_STALE_SECONDS)} s, when a plugin at the default 5 s heartbeat has missed three and counts as stale.`,
      unit: 's',
      width: 3,
      thresholds: [{ value: null, color: COLORS.ok }, { value: PLUGIN_STALE_SECONDS, color: COLORS.warning }],
      queries: [{ expr: ageOf(q, 'hermes_plugin_last_seen_timestamp_seconds'), legend: 'age' }],
    }),
    stat({
      title: 'Live plugin instances',
      description: 'Bridge plugin instances with a heartbeat within three intervals.',
      unit: 'short',
      width: 2,
      // No live plugin: nothing reaches the sidecar.
      thresholds: redBelow(1),
      queries: [{ expr: sumBy([], q.selected('hermes_plugin_instances', 'state="live"')), legend: 'live' }],
    }),
    stat({
      title: 'Live series',
      description: 'Live series across agent metrics; compare with the configured caps and the scrape sample_limit.',
      unit: 'short',
      width: 3,
      thresholds: neutral(),
      queries: [{ expr: sumBy([], q.selected('hermes_sidecar_series')), legend: 'series' }],
    }),
    stat({
      title: 'Queue fill',
      description: `Ingest queue depth as a share of its capacity; red at ${String(thresholds.queueFillRatio)} (HermesSidecarQueueNearCapacity); at 100 % batches are refused with 429/503.`,
      unit: 'percentunit',
      width: 2,
      min: 0,
      max: 1,
      thresholds: redFrom(thresholds.queueFillRatio),
      queries: [
        {
          expr: `${sumBy([], q.selected('hermes_sidecar_queue_depth'))} / (${sumBy([], q.selected('hermes_sidecar_queue_capacity'))} > 0)`,
          legend: 'fill',
        },
      ],
    }),
    stat({
      title: 'Scrape errors',
      description: 'Failures per second while rendering /metrics (a collector that threw, or a failed render answered with 500).',
      unit: 'cps',
      width: 3,
      // Any scrape error is a fault (HermesSidecarScrapeErrors fires on one).
      thresholds: redFrom(ANY_INCREASE),
      queries: [{ expr: sumBy([], q.rateOf('hermes_sidecar_scrape_errors_total')), legend: 'errors' }],
    }),
    timeseries({
      title: 'Dropped callbacks by hook and reason',
      description: 'Hook callbacks the bridge plugin dropped inside Hermes (from its heartbeats). Every drop is an event missing from the agent metrics.',
      unit: 'cps',
      min: 0,
      width: 12,
      queries: [
        {
          expr: sumBy(['hook', 'reason'], q.rateOf('hermes_plugin_callbacks_dropped_total')),
          legend: '{{hook}} {{reason}}',
        },
      ],
    }),
    timeseries({
      title: 'Lost and duplicate events',
      description:
        'Lost: settled gaps in plugin sequence numbers (events that left Hermes and never arrived). Late: events that filled a gap before it settled (applied once). Duplicate: retried batches, applied once. Resets: sequence jumps past the window (a new epoch, nothing counted lost) and restarts under the same instance. Discarded: answered 202, not applied: after_lost (already counted lost) or beyond_memory (older than the sidecar remembers). Stale heartbeats: delayed or replayed, ignored.',
      unit: 'cps',
      min: 0,
      width: 12,
      queries: [
        { expr: sumBy([], q.rateOf('hermes_sidecar_events_lost_total')), legend: 'lost' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_events_late_total')), legend: 'late' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_events_duplicate_total')), legend: 'duplicate' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_sequence_resets_total')), legend: 'sequence resets' },
        { expr: sumBy(['reason'], q.rateOf('hermes_sidecar_events_discarded_total')), legend: 'discarded {{reason}}' },
        { expr: sumBy(['reason'], q.rateOf('hermes_sidecar_heartbeats_stale_total')), legend: 'stale heartbeats {{reason}}' },
      ],
    }),
  ],
});

const delivery = (q: Promql): RowSpec => ({
  title: 'Delivery health',
  panels: [
    timeseries({
      title: 'Orphaned spans by kind',
      description: 'Started operations whose terminal event never came within the span TTL (or were evicted from a full map).',
      unit: 'cps',
      min: 0,
      queries: [{ expr: sumBy(['kind'], q.rateOf('hermes_sidecar_orphaned_spans_total')), legend: '{{kind}}' }],
    }),
    timeseries({
      title: 'Sessions and calls left out of the agent views',
      description: 'Sessions the per-session histograms do not observe (expired or evicted before finalization, subagent sessions, finalizations without a seen start; unpriced ones only miss the cost histogram), and streamed calls without an output speed (no positive time after the first chunk, or no output count).',
      unit: 'cps',
      min: 0,
      queries: [
        { expr: sumBy(['reason'], q.rateOf('hermes_sidecar_sessions_unobserved_total')), legend: 'sessions {{reason}}' },
        { expr: sumBy(['platform'], q.rateOf('hermes_sidecar_sessions_inferred_total')), legend: 'sessions inferred (start skipped by Hermes) {{platform}}' },
        { expr: sumBy(['reason'], q.rateOf('hermes_sidecar_output_speed_unmeasured_total')), legend: 'output speed {{reason}}' },
        { expr: sumBy(['reason'], q.rateOf('hermes_sidecar_time_to_first_chunk_unmeasured_total')), legend: 'time to first chunk {{reason}}' },
      ],
    }),
    timeseries({
      title: 'Rejected events by reason',
      description: 'Events or requests refused at the edge (invalid JSON, unauthorized, too large, ...).',
      unit: 'cps',
      min: 0,
      queries: [{ expr: sumBy(['reason'], q.rateOf('hermes_sidecar_events_rejected_total')), legend: '{{reason}}' }],
    }),
    timeseries({
      title: 'Dropped events by reason',
      description: 'Events refused for lack of capacity or during shutdown; the sender was told to retry.',
      unit: 'cps',
      min: 0,
      queries: [{ expr: sumBy(['reason'], q.rateOf('hermes_sidecar_events_dropped_total')), legend: '{{reason}}' }],
    }),
    timeseries({
      title: 'Ignored events by event',
      description: 'Valid events without a metric mapping (for example streaming hooks); expected, but a new name here may be a new Hermes hook.',
      unit: 'cps',
      min: 0,
      queries: [{ expr: sumBy(['event'], q.rateOf('hermes_sidecar_events_ignored_total')), legend: '{{event}}' }],
    }),
    timeseries({
      title: 'Label overflow by label',
      description: 'Label values folded into "other" by the cardinality guard, per label (raise the cap or add an allow-list); raw values cut to --ingest.max-label-value-bytes; spellings evicted from the guard\'s bounded cache (a steady rate means many spellings of few values).',
      unit: 'cps',
      min: 0,
      queries: [
        { expr: sumBy(['label'], q.rateOf('hermes_sidecar_label_overflow_total')), legend: '{{label}}' },
        { expr: sumBy(['label'], q.rateOf('hermes_sidecar_label_values_cut_total')), legend: '{{label}} cut' },
        { expr: sumBy(['label'], q.rateOf('hermes_sidecar_label_cache_evictions_total')), legend: '{{label}} spellings evicted' },
      ],
    }),
    timeseries({
      title: 'Plugin instances by state',
      description: 'Bridge plugin instances seen: live (heartbeat within three intervals) or stale.',
      unit: 'short',
      min: 0,
      queries: [{ expr: sumBy(['state'], q.selected('hermes_plugin_instances')), legend: '{{state}}' }],
    }),
    timeseries({
      title: 'Plugin instances by Hermes version and profile',
      description: 'Live bridge plugin instances by the Hermes version of their host, their own version and their Hermes profile.',
      unit: 'short',
      min: 0,
      queries: [
        {
          expr: sumBy(['hermes_version', 'plugin_version', 'profile'], q.selected('hermes_plugin_info')),
          legend: '{{hermes_version}} {{plugin_version}} {{profile}}',
        },
      ],
    }),
    timeseries({
      title: 'Values kept inside Hermes by field',
      description: 'Strings the plugin refused per second because they did not match their field\'s grammar: a Hermes change that puts free text in an id or identifier field shows here.',
      unit: 'ops',
      min: 0,
      queries: [{ expr: sumBy(['field'], q.rateOf('hermes_plugin_values_refused_total')), legend: '{{field}}' }],
    }),
    timeseries({
      title: 'Time since last event and plugin heartbeat',
      description: 'Seconds since the newest applied event and since the newest plugin heartbeat or event, per sidecar.',
      unit: 's',
      min: 0,
      queries: [
        {
          expr: `time() - ${q.selected('hermes_sidecar_last_event_timestamp_seconds')}`,
          legend: 'last event {{instance}}',
        },
        {
          expr: `time() - ${q.selected('hermes_plugin_last_seen_timestamp_seconds')}`,
          legend: 'plugin seen {{instance}}',
        },
      ],
    }),
  ],
});

const ingest = (q: Promql): RowSpec => ({
  title: 'Ingest and queue',
  panels: [
    timeseries({
      title: 'Listener connections',
      description:
        'Open connections per listener against their cap (--web.max-connections, --ingest.max-connections), and the connections the sidecar closed itself, by listener and reason: refused or evicted at the cap (a stalled reader, an idle or half-sent connection, a body below --ingest.min-body-rate, the connection served most lately), its request limit reached, a request head or request too slow, an answer not read in time, too many pipelined requests; and scrape answers dropped because too many bytes sat unread. A steady rate of closes means a peer that holds connections or does not read. Stalled: connections whose peer has stopped reading its answer (the first evicted at the cap). Delayed: requests held back because one connection made them faster than --web.max-connection-request-rate. Renders against paced scrapes: scrapes that waited for a later render (--web.min-render-interval); many paced scrapes per render means a crowd of scrapers.',
      unit: 'short',
      min: 0,
      width: 24,
      queries: [
        { expr: sumBy(['listener'], q.selected('hermes_sidecar_connections_open')), legend: '{{listener}} open' },
        { expr: sumBy(['listener'], q.selected('hermes_sidecar_connections_limit')), legend: '{{listener}} cap' },
        { expr: sumBy(['listener', 'reason'], q.rateOf('hermes_sidecar_connections_closed_total')), legend: '{{listener}} closed {{reason}} /s' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_scrape_answers_dropped_total')), legend: 'scrape answers dropped /s' },
        { expr: sumBy(['listener'], q.selected('hermes_sidecar_connections_stalled')), legend: '{{listener}} stalled' },
        { expr: sumBy(['listener'], q.rateOf('hermes_sidecar_requests_delayed_total')), legend: '{{listener}} requests delayed /s' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_scrape_renders_total')), legend: 'scrape renders /s' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_scrapes_paced_total')), legend: 'scrapes paced /s' },
      ],
    }),
    timeseries({
      title: 'Events received by source and event',
      description: 'Events taken from the ingest queue to be applied, per second, by source (plugin, envelope, flat, webhook) and hook name.',
      unit: 'cps',
      width: 12,
      min: 0,
      stacked: true,
      queries: [
        { expr: sumBy(['source', 'event'], q.rateOf('hermes_sidecar_events_received_total')), legend: '{{source}} {{event}}' },
      ],
    }),
    timeseries({
      title: 'Ingest requests by code',
      description: 'HTTP ingest requests per second by route and status code; 429/503 mean back-pressure, 401/403 a token or signature mismatch.',
      unit: 'reqps',
      width: 12,
      min: 0,
      queries: [
        { expr: sumBy(['route', 'code'], q.rateOf('hermes_sidecar_ingest_requests_total')), legend: '{{route}} {{code}}' },
      ],
    }),
    timeseries({
      title: 'Batch size p50 / p95',
      description: 'Events per ingest request; large batches mean the plugin is catching up.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: q.quantileOf(0.5, 'hermes_sidecar_ingest_batch_events', []), legend: 'p50' },
        { expr: q.quantileOf(0.95, 'hermes_sidecar_ingest_batch_events', []), legend: 'p95' },
      ],
    }),
    timeseries({
      title: 'Queue depth and capacity',
      description: 'Batches waiting in the ingest queue or being applied against the configured bound, per sidecar.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: q.selected('hermes_sidecar_queue_depth'), legend: 'depth {{instance}}' },
        { expr: q.selected('hermes_sidecar_queue_capacity'), legend: 'capacity {{instance}}' },
      ],
    }),
    timeseries({
      title: 'Queued events and capacity',
      description: 'Events in the queued batches against the bound in events (--ingest.queue-max-events), per sidecar; past either bound ingest answers 429.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: q.selected('hermes_sidecar_queue_events'), legend: 'events {{instance}}' },
        { expr: q.selected('hermes_sidecar_queue_events_capacity'), legend: 'capacity {{instance}}' },
      ],
    }),
    timeseries({
      title: 'Body bytes in flight',
      description: 'Bytes of request bodies being read or held on the ingest listener; at --ingest.max-inflight-bytes new bodies are refused with 503 (inflight_limit).',
      unit: 'bytes',
      min: 0,
      queries: [{ expr: q.selected('hermes_sidecar_ingest_inflight_bytes'), legend: '{{instance}}' }],
    }),
    timeseries({
      title: 'Values and keys refused at the edge',
      description:
        'Per second: event values outside their bounds (treated as absent) by field, numbers past their plausible bound and ids or names past their byte limit, heartbeat drop keys folded into "other", and web requests refused by basic auth by reason.',
      unit: 'cps',
      min: 0,
      queries: [
        { expr: sumBy(['field'], q.rateOf('hermes_sidecar_values_rejected_total')), legend: 'value {{field}}' },
        { expr: sumBy(['key'], q.rateOf('hermes_sidecar_heartbeat_keys_folded_total')), legend: 'heartbeat {{key}} folded' },
        { expr: sumBy(['reason'], q.rateOf('hermes_sidecar_web_auth_failures_total')), legend: 'web auth {{reason}}' },
      ],
    }),
    timeseries({
      title: 'State table evictions by table',
      description: 'Entries evicted from a full state table before they expired (plugin_instances, sessions); evicted instances lose their sequence tracking, evicted sessions leave the active gauge.',
      unit: 'cps',
      min: 0,
      queries: [{ expr: sumBy(['table'], q.rateOf('hermes_sidecar_state_evictions_total')), legend: '{{table}}' }],
    }),
  ],
});

const processRow = (q: Promql): RowSpec => ({
  title: 'Process',
  panels: [
    timeseries({
      title: 'CPU usage',
      description: 'CPU time used per second (1 = one full core); the sidecar is single-threaded, so near 1 means saturation.',
      unit: 'percentunit',
      min: 0,
      queries: [{ expr: q.rateOf('process_cpu_seconds_total'), legend: '{{instance}}' }],
    }),
    timeseries({
      title: 'Memory',
      description: 'Resident memory, V8 heap used, and the live memory (heap + Buffers) the memory guard compares with --memory.limit-bytes.',
      unit: 'bytes',
      min: 0,
      queries: [
        { expr: q.selected('process_resident_memory_bytes'), legend: 'resident {{instance}}' },
        { expr: q.selected('nodejs_heap_size_used_bytes'), legend: 'heap used {{instance}}' },
        { expr: q.selected('hermes_sidecar_memory_live_bytes'), legend: 'live (guard) {{instance}}' },
      ],
    }),
    timeseries({
      title: 'Memory pressure',
      description: '1 while the memory guard refuses ingest (503) and /-/ready answers 503 because bodies in flight hold the memory; it ends once live memory is 10% under the limit. Below: times live memory went over the limit by cause (inflight: refused; held: stored series, never refused), and series expired early to shed held memory.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: q.selected('hermes_sidecar_memory_pressure'), legend: 'pressure {{instance}}' },
        { expr: sumBy(['cause'], q.rateOf('hermes_sidecar_memory_over_limit_total')), legend: 'over the limit/s, {{cause}}' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_memory_series_shed_total')), legend: 'series shed early/s' },
      ],
    }),
    timeseries({
      title: 'Event-loop lag p99',
      description: 'p99 Node.js event-loop lag; sustained lag delays ingest and scrapes.',
      unit: 's',
      min: 0,
      queries: [{ expr: q.selected('nodejs_eventloop_lag_p99_seconds'), legend: '{{instance}}' }],
    }),
    timeseries({
      title: 'Live series against the cap',
      description: 'Live label sets across agent metrics per sidecar, and the global series cap; past the cap new label sets fold into overflow series.',
      unit: 'short',
      min: 0,
      width: 8,
      queries: [
        { expr: q.selected('hermes_sidecar_series'), legend: 'series {{instance}}' },
        { expr: q.selected('hermes_sidecar_series_limit'), legend: 'limit {{instance}}' },
      ],
    }),
    timeseries({
      title: 'Series bytes against the budget',
      description: 'Bytes the live agent series hold (labels, numbers, classic and native buckets, cached renderings) and --metrics.max-series-bytes; past it new label sets fold into overflow series (the folded panel beside it).',
      unit: 'bytes',
      min: 0,
      width: 8,
      queries: [
        { expr: q.selected('hermes_sidecar_series_bytes'), legend: 'bytes {{instance}}' },
        { expr: q.selected('hermes_sidecar_series_bytes_limit'), legend: 'budget {{instance}}' },
      ],
    }),
    timeseries({
      title: 'Series folded by the global cap',
      description:
        'New label sets per second folded into overflow series (open labels as "other") because the global series cap was reached, by metric; native histogram halvings: a series that passed --metrics.native-histogram-max-buckets halved its native resolution; and series per second removed after --metrics.series-ttl without a write (their slots and label values go back to the caps).',
      unit: 'cps',
      min: 0,
      width: 8,
      queries: [
        { expr: sumBy(['metric'], q.rateOf('hermes_sidecar_series_overflow_total')), legend: '{{metric}}' },
        { expr: sumBy(['metric'], q.rateOf('hermes_sidecar_series_bytes_refused_total')), legend: 'past the byte budget {{metric}}' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_native_resolution_reductions_total')), legend: 'native histogram halvings' },
        { expr: sumBy(['metric'], q.rateOf('hermes_sidecar_series_expired_total')), legend: 'expired {{metric}}' },
      ],
    }),
    timeseries({
      title: 'Scrape errors by stage',
      description:
        '/metrics failures per second: collect (a collector threw) or render (the registry failed); both answer 500, so up = 0. Refused values: not finite or negative values the storage did not store (a sidecar bug).',
      unit: 'cps',
      min: 0,
      width: 8,
      queries: [
        { expr: sumBy(['stage'], q.rateOf('hermes_sidecar_scrape_errors_total')), legend: '{{stage}}' },
        { expr: sumBy([], q.rateOf('hermes_sidecar_invalid_values_total')), legend: 'refused values' },
      ],
    }),
  ],
});

export function sidecarHealthDashboard(config: MonitoringConfig): Dashboard {
  const q = promql(config.selector, config.histograms);
  return buildDashboard({
    uid: SIDECAR_HEALTH_UID,
    title: 'Hermes sidecar health',
    description:
      'Delivery health of the Hermes observer-hook pipeline (plugin, ingest, queue) and of the sidecar process.',
    variables: [datasourceVariable(), jobVariable(config.selector), instanceVariable(config.selector)],
    rows: [status(q, config), delivery(q), ingest(q), processRow(q)],
  });
}
