/**
 * `hermes-prometheus-sidecar ready [--timeout=SECONDS] [SIDECAR OPTIONS]`: waits until the sidecar
 * that the same configuration describes accepts events, for a service manager's readiness step
 * (the systemd unit's ExecStartPost). It asks GET /-/ready on the ingest listener, with the ingest
 * bearer token when one is set: that works whatever basic auth or TLS the web listener uses.
 */
import { ConfigError, loadConfig, type Config } from '../config.js';

export interface ReadyIo {
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  readonly fetch: typeof fetch;
  readonly sleep: (ms: number) => Promise<void>;
  readonly nowMs: () => number;
}

const DEFAULT_TIMEOUT_SECONDS = 25;
const POLL_MS = 200;
const TIMEOUT_FLAG = /^--timeout=(.*)$/;

/** Where a local client reaches a listener bound to `host` (the wildcard addresses by loopback). */
export function probeUrl(config: Config): string {
  const { host, port } = config.ingest.listen;
  const local = host === '' || host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}/-/ready`;
}

function splitTimeout(argv: readonly string[]): { seconds: number; rest: string[] } {
  let seconds = DEFAULT_TIMEOUT_SECONDS;
  const rest: string[] = [];
  for (const arg of argv) {
    const match = TIMEOUT_FLAG.exec(arg);
    if (match === null) {
      rest.push(arg);
      continue;
    }
    seconds = Number(match[1]);
    if (!Number.isFinite(seconds) || seconds <= 0) throw new ConfigError(`--timeout=${match[1] ?? ''} must be a positive number of seconds (see --help).`);
  }
  return { seconds, rest };
}

type Answer = { readonly status: number; readonly text: string } | { readonly error: string };

async function ask(io: ReadyIo, url: string, token: string | undefined): Promise<Answer> {
  try {
    const response = await io.fetch(url, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(2000) });
    return { status: response.status, text: (await response.text()).trim().slice(0, 80) };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { error: cause === 'ECONNREFUSED' ? 'connection refused' : (cause ?? (error as Error).name) };
  }
}

const describe = (answer: Answer): string => ('error' in answer ? answer.error : `${answer.status} ${answer.text}`);

/** Exit status: 0 ready, 1 not ready in time (or refused the token), 2 bad arguments or configuration. */
export async function runReady(argv: readonly string[], io: ReadyIo): Promise<number> {
  let seconds: number;
  let config: Config;
  try {
    const split = splitTimeout(argv);
    seconds = split.seconds;
    config = loadConfig({ argv: split.rest, env: io.env });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(`hermes-prometheus-sidecar ready: ${error.message}\n`);
    return 2;
  }
  const url = probeUrl(config);
  const deadline = io.nowMs() + seconds * 1000;
  for (;;) {
    const answer = await ask(io, url, config.ingest.token);
    if ('status' in answer && answer.status === 200) return 0;
    if ('status' in answer && answer.status === 401) {
      io.stderr(`hermes-prometheus-sidecar ready: ${url} refused the ingest token: give the probe the sidecar's HERMES_SIDECAR_INGEST_TOKEN or --ingest.token-file.\n`);
      return 1;
    }
    if (io.nowMs() >= deadline) {
      io.stderr(`hermes-prometheus-sidecar ready: the sidecar was not ready at ${url} within ${seconds} s (last answer: ${describe(answer)}).\n`);
      return 1;
    }
    await io.sleep(POLL_MS);
  }
}
