/**
 * Locating the real external tools the tests run (promtool, prometheus, python3).
 *
 * A missing tool skips the suites that need it with a printed reason, except under CI
 * (CI=true), where .ci/run installs Debian's `prometheus` package and nothing may be skipped:
 * there a missing tool is an error.
 */
import { execFileSync } from 'node:child_process';

function which(command: string): string | undefined {
  try {
    const found = execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim();
    return found.length > 0 ? found : undefined;
  } catch {
    return undefined;
  }
}

export interface Tool {
  readonly path: string | undefined;
  /** Reason the suite is skipped, printed once; undefined when the tool is there. */
  readonly skipReason: string | undefined;
}

export function locate(command: string, hint: string): Tool {
  const path = which(command);
  if (path !== undefined) return { path, skipReason: undefined };
  if (process.env.CI === 'true') {
    throw new Error(`${command} is required under CI but was not found on PATH (${hint})`);
  }
  const skipReason = `SKIPPED: ${command} not found on PATH (${hint})`;
  console.warn(skipReason);
  return { path: undefined, skipReason };
}

export const promtool = (): Tool => locate('promtool', "install Debian's prometheus package");
export const prometheus = (): Tool => locate('prometheus', "install Debian's prometheus package");
export const amtool = (): Tool => locate('amtool', "install Debian's prometheus-alertmanager package");
export const alertmanager = (): Tool => locate('prometheus-alertmanager', "install Debian's prometheus-alertmanager package");
export const python3 = (): Tool => locate('python3', 'install Python 3');
export const systemdAnalyze = (): Tool => locate('systemd-analyze', "install Debian's systemd package");
export const kubectl = (): Tool => locate('kubectl', "install Debian's kubectl package");
