/**
 * Watching and reloading the web config (src/web/configWatch.ts): a change is acted on once it
 * reads the same on two polls, loads learn which files to watch, and reloads run one at a time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangePoller, loadTracked, serialized } from '../../src/web/configWatch.js';

const dirs: string[] = [];
const pollers: ChangePoller[] = [];
afterEach(() => {
  for (const poller of pollers.splice(0)) poller.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sidecar-configwatch-'));
  dirs.push(dir);
  return dir;
}

describe('ChangePoller', () => {
  it('calls back once for a change that reads the same on two polls, and not for an unchanged file', async () => {
    const file = join(tempDir(), 'web.yml');
    writeFileSync(file, 'basic_auth_users: {}\n');
    const onChange = vi.fn(async () => undefined);
    const poller = new ChangePoller(10, onChange);
    pollers.push(poller);
    await poller.capture([file]);
    poller.start();
    expect(poller.tracked).toEqual([file]);
    writeFileSync(file, 'basic_auth_users:\n  alice: x\n');
    await vi.waitFor(() => expect(onChange).toHaveBeenCalled(), { timeout: 5000, interval: 10 });
    // The callback reloads and re-captures the baseline, as the server's reload does.
    await poller.capture([file]);
    const calls = onChange.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(onChange.mock.calls.length).toBe(calls);
  });

  it('notices a file that appears where there was none', async () => {
    const file = join(tempDir(), 'next.crt');
    const onChange = vi.fn(async () => undefined);
    const poller = new ChangePoller(10, onChange);
    pollers.push(poller);
    await poller.capture([file]);
    poller.start();
    writeFileSync(file, 'certificate');
    await vi.waitFor(() => expect(onChange).toHaveBeenCalled(), { timeout: 5000, interval: 10 });
  });
});

describe('loadTracked', () => {
  it('watches the config file and every file a good config names', async () => {
    const dir = tempDir();
    const file = join(dir, 'web.yml');
    writeFileSync(file, 'basic_auth_users: {}\n');
    const poller = new ChangePoller(1000, async () => undefined);
    const attempt = await loadTracked(file, poller, undefined);
    expect(attempt.error).toBeUndefined();
    expect(poller.tracked).toEqual(attempt.config?.files);
    expect(poller.tracked).toContain(file);
  });

  it('returns the error of a config that does not load', async () => {
    const file = join(tempDir(), 'web.yml');
    writeFileSync(file, 'tls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n');
    const attempt = await loadTracked(file, new ChangePoller(1000, async () => undefined), undefined);
    expect(attempt.config).toBeUndefined();
    expect(String(attempt.error)).toContain('tls_server_config.cert_file');
  });
});

describe('serialized', () => {
  it('runs one reload at a time and folds triggers that arrive while one waits into it', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    const reload = serialized(async () => {
      running += 1;
      runs += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 20));
      running -= 1;
      return true;
    });
    const first = reload();
    // Calls before the first has started fold into it.
    expect(reload()).toBe(first);
    await vi.waitFor(() => expect(running).toBe(1), { timeout: 5000, interval: 1 });
    // Calls while it runs wait together for one more run.
    const waiting = [reload(), reload(), reload()];
    expect(new Set(waiting).size).toBe(1);
    expect(await Promise.all([first, ...waiting])).toEqual([true, true, true, true]);
    expect(most).toBe(1);
    expect(runs).toBe(2);
  });
});
