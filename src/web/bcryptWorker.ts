/**
 * bcrypt off the event loop: verifications run in one worker thread, so a flood of wrong
 * passwords costs that thread's CPU, not the loop that serves verified scrapes and ingest.
 * (bcryptjs on the loop runs in slices of up to 100 ms; under a flood the loop stays saturated.)
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// CommonJS run by the worker (eval): the worker needs no build step of its own.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptPath);
parentPort.on('message', ({ id, password, hash }) => {
  let ok = false;
  try { ok = bcrypt.compareSync(password, hash); } catch { ok = false; }
  parentPort.postMessage({ id, ok });
});
`;

export class BcryptWorker {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, (ok: boolean) => void>();

  /** Resolves true when the password matches the bcrypt hash. */
  compare(password: string, hash: string): Promise<boolean> {
    const worker = this.start();
    const id = (this.nextId += 1);
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, password, hash });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    for (const resolve of this.pending.values()) resolve(false);
    this.pending.clear();
    if (worker !== undefined) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker;
    const bcryptPath = createRequire(import.meta.url).resolve('bcryptjs');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcryptPath } });
    // The worker alone must not keep the process alive.
    worker.unref();
    worker.on('message', ({ id, ok }: { id: number; ok: boolean }) => {
      const resolve = this.pending.get(id);
      this.pending.delete(id);
      resolve?.(ok);
    });
    worker.on('error', () => {
      // A dead worker refuses what it held; the next verification starts a new one.
      for (const resolve of this.pending.values()) resolve(false);
      this.pending.clear();
      this.worker = undefined;
    });
    this.worker = worker;
    return worker;
  }
}
