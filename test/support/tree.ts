/** Process trees and listeners seen from outside, for tests that stop a whole tree with one signal. */
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';

function parentOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // field 4 of /proc/PID/stat, after the command name (which may hold spaces and parentheses)
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Pids whose parent is `parent`, from /proc. */
export function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => parentOf(pid) === parent)
    .map(Number);
}

/** Every pid below `root` (children, their children, ...). */
export function descendantsOf(root: number): number[] {
  const found: number[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of childrenOf(pid)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The command line of a live process, split into its arguments ([] once it is gone). */
export function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((part) => part !== '');
  } catch {
    return [];
  }
}

export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** True when nothing listens on `host:port` any more (the connection is refused). */
export const refused = (address: string): Promise<boolean> =>
  new Promise((resolve) => {
    const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });

export async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}
