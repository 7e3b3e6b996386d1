/**
 * Watching the web config file and the files it names, and reloading it: a poller that notices
 * changes by content, a load that knows which files to watch, and reloads run one at a time.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { loadWebConfig, type WebConfig } from './webConfig.js';

/** One digest over the bytes (or the read error) of each file, in order. */
async function digestFiles(files: readonly string[]): Promise<string> {
  const digest = createHash('sha256');
  for (const file of files) {
    digest.update(`${file}\0`);
    try {
      const bytes = await readFile(file);
      digest.update(`${bytes.length}\0`).update(bytes);
    } catch (error) {
      digest.update(`!${(error as NodeJS.ErrnoException).code ?? 'error'}\0`);
    }
  }
  return digest.digest('hex');
}

/**
 * Notices changes to the config file and the files it names by polling their content.
 *
 * Content rather than fs.watchFile's stat: the digest is taken *before* a load reads the files,
 * so a write that lands during or after the load is always seen on the next poll (a stat
 * watcher's first reading races with such a write and can miss it), and same-size rewrites
 * within one mtime tick or symlink swaps (Kubernetes secrets) are caught too. The files are a
 * few KB, so reading them every couple of seconds costs nothing.
 *
 * A change must read the same on two consecutive polls before it is acted on, so a file caught
 * half-written (an empty web config would mean "no auth") is never applied.
 */
export class ChangePoller {
  private files: readonly string[] = [];
  private baseline = '';
  private candidate: string | undefined;
  private polling = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly onChange: () => Promise<unknown>,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.intervalMs);
    // The poller alone must not keep the process alive.
    this.timer.unref();
  }

  get tracked(): readonly string[] {
    return this.files;
  }

  /** Records the content a load is about to read. */
  async capture(files: readonly string[]): Promise<void> {
    this.files = files;
    this.baseline = await digestFiles(files);
    this.candidate = undefined;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const now = await digestFiles(this.files);
      if (now === this.baseline) this.candidate = undefined;
      else if (now !== this.candidate) this.candidate = now;
      else await this.onChange();
    } catch {
      // onChange logs its own failures; a poll must never become an unhandled rejection.
    } finally {
      this.polling = false;
    }
  }
}

/** Runs one reload at a time, and folds triggers that arrive while one waits into it. */
export function serialized(run: () => Promise<boolean>): () => Promise<boolean> {
  let chain: Promise<unknown> = Promise.resolve();
  let waiting: Promise<boolean> | undefined;
  return () => {
    if (waiting !== undefined) return waiting;
    const next = chain.then(() => {
      waiting = undefined;
      return run();
    });
    waiting = next;
    chain = next.catch(() => undefined);
    return next;
  };
}

export type Attempt = { readonly config: WebConfig; readonly error?: undefined } | { readonly config?: undefined; readonly error: unknown };

const sameFiles = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((file, index) => file === b[index]);

/**
 * Loads the config with the poller's snapshot taken first. The files to snapshot are only known
 * once the config has been read, so when a load names files the snapshot did not cover, it is
 * taken again and the load repeated (loads are cheap: no bcrypt). A failed load keeps the last
 * good config's files watched, plus whatever the broken one names, so fixing any of them counts.
 */
export async function loadTracked(configFile: string, poller: ChangePoller, lastGood: WebConfig | undefined): Promise<Attempt> {
  let files = poller.tracked.length > 0 ? poller.tracked : [resolvePath(configFile)];
  let attempt: Attempt = { error: new Error('not loaded') };
  for (let pass = 0; pass < 3; pass += 1) {
    await poller.capture(files);
    attempt = await loadWebConfig(configFile).then(
      (config): Attempt => ({ config }),
      (error: unknown): Attempt => ({ error }),
    );
    const named =
      attempt.config?.files ??
      [...new Set([...(lastGood?.files ?? []), ...((attempt.error as { files?: readonly string[] }).files ?? [])])];
    if (sameFiles(named, files)) break;
    files = named;
  }
  return attempt;
}
