/** Builds dist/ once before the suites that spawn the real `hermes-prometheus-sidecar` binary. */
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
