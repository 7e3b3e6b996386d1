/** Reading a running sidecar's delivery accounting from its /metrics, for end-to-end checks. */
import { parseSamples, type Samples } from './exposition.js';

export async function scrapeSamples(sidecar: { readonly web: string }): Promise<Samples> {
  return parseSamples(await (await fetch(`${sidecar.web}/metrics`)).text());
}

/** Sum of every series of a metric whose text starts with `prefix`, optionally skipping some. */
export function sumOf(samples: Samples, prefix: string, exclude?: string): number {
  let total = 0;
  for (const [key, value] of samples) {
    if (key.startsWith(prefix) && (exclude === undefined || !key.includes(exclude))) total += value;
  }
  return total;
}

/** Hook events a sidecar applied: received minus duplicates and discards, plugin heartbeats aside. */
export function appliedEvents(samples: Samples): number {
  return (
    sumOf(samples, 'hermes_sidecar_events_received_total{', 'event="plugin_heartbeat"') -
    (samples.get('hermes_sidecar_events_duplicate_total') ?? 0) -
    sumOf(samples, 'hermes_sidecar_events_discarded_total{')
  );
}

/** Callback drops the plugin reported, over every hook and reason. */
export function droppedTotal(samples: Samples): number {
  return sumOf(samples, 'hermes_plugin_callbacks_dropped_total{');
}
