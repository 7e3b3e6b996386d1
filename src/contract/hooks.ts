/**
 * Hook and event names the sidecar knows (Hermes' hooks, the envelope variant, and the plugin's
 * own heartbeat). They are label values too, so the catalogue declares them (VALUES.event); the
 * `event` label of the self-metrics only ever takes these values or `other`.
 */
import { OTHER } from '../wireText.js';
import { VALUES, type ValueOf } from './vocabulary.js';

/** The Hermes release the contract is tested against: what "fed by" in docs/metrics.md speaks of. */
export const TESTED_HERMES = 'Hermes 306e2d2 (July 2026)';

/** Events that move agent or delivery metrics. */
export const MAPPED_EVENTS = [...VALUES.plugin_hook, ...VALUES.envelope_event, 'plugin_heartbeat'] as const;

const KNOWN_EVENTS: ReadonlySet<string> = new Set(VALUES.event);
const IGNORED_EVENTS: ReadonlySet<string> = new Set(VALUES.ignored_event);

/** The `event` label value for a name sent by a client (names match exactly, as Hermes dispatches them). */
export function eventLabel(name: string): ValueOf<'event'> | typeof OTHER {
  return KNOWN_EVENTS.has(name) ? (name as ValueOf<'event'>) : OTHER;
}

/** The `event` label value of an event with no metric mapping. */
export function ignoredEventLabel(name: string): ValueOf<'ignored_event'> | typeof OTHER {
  return IGNORED_EVENTS.has(name) ? (name as ValueOf<'ignored_event'>) : OTHER;
}
