/**
 * Misspelt settings in the environment: a `HERMES_SIDECAR_*` variable that names no setting is
 * otherwise silently ignored (`HERMES_SIDECAR_WEBHOOK_SECRT` leaves the webhook route off), so the
 * sidecar warns about each one at start, with the closest known name when one is near.
 */
import { closest } from './suggest.js';

const PREFIX = 'HERMES_SIDECAR_';

/**
 * Variables of the prefix that are someone else's, not misspellings: the bridge plugin's (its
 * plugin.yaml `optional_env`; Hermes and the sidecar may share one environment file) and the
 * build's revision.
 */
export const FOREIGN_ENVIRONMENT_NAMES: readonly string[] = [
  'HERMES_SIDECAR_URL',
  'HERMES_SIDECAR_TOKEN',
  'HERMES_SIDECAR_TOKEN_FILE',
  'HERMES_SIDECAR_DISABLED',
  'HERMES_SIDECAR_QUEUE_SIZE',
  'HERMES_SIDECAR_BUFFER_SIZE',
  'HERMES_SIDECAR_BATCH_SIZE',
  'HERMES_SIDECAR_FLUSH_INTERVAL',
  'HERMES_SIDECAR_TIMEOUT',
  'HERMES_SIDECAR_HEARTBEAT_INTERVAL',
  'HERMES_SIDECAR_COMPACT',
  'HERMES_SIDECAR_REVISION',
];

/** One sentence per `HERMES_SIDECAR_*` variable in `env` that is neither in `known` nor foreign. */
export function unknownEnvironmentWarnings(env: NodeJS.ProcessEnv, known: readonly string[]): string[] {
  const recognised = new Set([...known, ...FOREIGN_ENVIRONMENT_NAMES]);
  return Object.keys(env)
    .filter((name) => name.startsWith(PREFIX) && !recognised.has(name))
    .sort()
    .map((name) => {
      const suggestion = closest(name, known);
      const hint = suggestion === undefined ? '' : `: did you mean ${suggestion}?`;
      return `${name} is not a setting of the sidecar and is ignored${hint} (see --help for every variable)`;
    });
}
