/**
 * The runner's side of bench/children/scrape.ts: starts the child and talks to it over IPC, one
 * outstanding command at a time.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnTsx, type SidecarProcess } from '../lib.js';

interface Reply {
  readonly id?: number;
  readonly ok?: boolean;
  readonly result?: unknown;
  readonly error?: string;
  readonly ready?: boolean;
  readonly web?: string;
  readonly ingest?: string;
  readonly prom?: string;
}

export interface Lag {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
  readonly count: number;
}

export interface ScrapeChild {
  readonly controller: Controller;
  readonly sidecar: SidecarProcess;
  /** prom-client's registry for the same catalogue, served by plain node:http in the same child. */
  readonly prom: string;
}

export class Controller {
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: Reply) => void>();
  private stderr = '';

  constructor(readonly child: ChildProcess) {
    child.on('message', (reply: Reply) => {
      if (reply.id === undefined) return;
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      for (const settle of this.waiting.values()) settle({ ok: false, error: `scrape child exited with ${code}: ${this.stderr}` });
      this.waiting.clear();
    });
  }

  static start(config: string, nodeFlags: readonly string[] = []): Promise<ScrapeChild> {
    const child = spawnTsx('children/scrape.ts', ['--config', config], { ipc: true, nodeFlags });
    const controller = new Controller(child);
    return new Promise((resolve, reject) => {
      child.on('message', (reply: Reply) => {
        if (reply.ready === true && reply.web !== undefined && reply.ingest !== undefined && reply.prom !== undefined) {
          resolve({
            controller,
            sidecar: { child, web: reply.web, ingest: reply.ingest, stop: () => controller.stop() },
            prom: reply.prom,
          });
        }
      });
      child.once('exit', (code) => reject(new Error(`scrape child exited with ${code}: ${controller.stderr}`)));
    });
  }

  call<T>(command: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (reply) => (reply.ok === true ? resolve(reply.result as T) : reject(new Error(reply.error))));
      if (!this.child.connected) reject(new Error(`scrape child is gone: ${this.stderr}`));
      else this.child.send({ id, ...command });
    });
  }

  /** Disconnecting ends the child. ('close' may never come after a disconnect; 'exit' does.) */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', resolve));
    if (this.child.connected) this.child.disconnect();
    return exited;
  }
}
