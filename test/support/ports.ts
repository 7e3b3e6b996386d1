/**
 * Ports for child processes without a probe that releases them: a program is started on
 * 127.0.0.1:0 and the port it bound is read from its log, so no other process can take the port
 * between choosing it and binding it. Prometheus and Alertmanager (exporter-toolkit) log
 * `msg="Listening on" address=127.0.0.1:PORT` at info level once bound.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

const LISTENING_ON = /msg="Listening on" address=(\S+)/;
const ADDRESS_IN_USE = /EADDRINUSE|address already in use/i;

/** True when an error (or a child's log) says a listen address was taken. */
export function isAddressInUse(error: unknown): boolean {
  return ADDRESS_IN_USE.test(error instanceof Error ? error.message : String(error));
}

/**
 * Resolves with `host:port` once the child logs the address it listens on; rejects, with the
 * log so far, when it exits first. Reads stderr to the end so the child never blocks on a full pipe.
 */
export function loggedListenAddress(child: ChildProcess, what: string): { address: Promise<string>; log: () => string } {
  let log = '';
  const address = new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString('utf8')).slice(-20_000);
      const found = LISTENING_ON.exec(log);
      if (found?.[1] !== undefined) resolve(found[1]);
    });
    child.once('close', (code, signal) => reject(new Error(`${what} exited (${signal ?? code}) before listening: ${log}`)));
  });
  address.catch(() => undefined);
  return { address, log: () => log };
}

/** Runs `start` again while it fails because an address was in use, at most `attempts` times. */
export async function retryOnAddressInUse<T>(start: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= attempts || !isAddressInUse(error)) throw error;
    }
  }
}

/**
 * A port to try for a program that must be told its port before it starts (a unit file's
 * environment, a container's port mapping). It lies outside the kernel's ephemeral range, so no
 * port-0 bind and no outgoing connection is ever handed it; it is random, so parallel runs rarely
 * pick the same one. Callers retry the whole start on EADDRINUSE (`retryOnAddressInUse`).
 */
export function candidatePort(): number {
  const [low = 32768, high = 60999] = ephemeralRange();
  const below = Math.max(0, low - 10_000);
  const above = Math.max(0, 65_535 - high);
  const pick = Math.floor(Math.random() * (below + above));
  return pick < below ? 10_000 + pick : high + 1 + (pick - below);
}

function ephemeralRange(): number[] {
  try {
    return readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  } catch {
    return [];
  }
}
