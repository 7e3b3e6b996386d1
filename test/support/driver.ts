/**
 * The real bridge plugin in a real Python process: plugin/tests/drive_conversation.py loads it
 * through the Hermes dispatch harness. One-shot scenarios print a summary line; hold mode takes
 * commands on stdin (`events N R`, `flush`, `stats`) and answers one JSON line each.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const DRIVER = fileURLToPath(new URL('../../plugin/tests/drive_conversation.py', import.meta.url));

export type DriverLine = Record<string, unknown> & { type?: string };

export interface PluginStats {
  readonly instance: string;
  readonly events_numbered: number;
  readonly events_delivered: number;
  readonly buffer_depth: number;
  readonly queue_depth: number;
  readonly retries: number;
  readonly heartbeats_sent: number;
  readonly dropped: Record<string, Record<string, number>>;
}

/** Runs a one-shot scenario and resolves with its summary line. */
export function runScenario(python: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<DriverLine> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [DRIVER, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0) reject(new Error(`driver exited ${code}: ${stderr}`));
      else resolve(JSON.parse(last) as DriverLine);
    });
  });
}

export class HeldPlugin {
  private buffered = '';
  private readonly waiting: ((line: DriverLine) => void)[] = [];
  private readonly lines: DriverLine[] = [];
  stderr = '';
  /** The driver's "ready" line: its stats and the file the plugin was loaded from. */
  ready: DriverLine = {};

  private constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      let newline = this.buffered.indexOf('\n');
      while (newline !== -1) {
        const line = JSON.parse(this.buffered.slice(0, newline)) as DriverLine;
        this.buffered = this.buffered.slice(newline + 1);
        const waiter = this.waiting.shift();
        if (waiter === undefined) this.lines.push(line);
        else waiter(line);
        newline = this.buffered.indexOf('\n');
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
  }

  /** Starts the driver in hold mode and waits for it to be ready. */
  static async start(python: string, url: string, env: NodeJS.ProcessEnv = {}, extraArgs: readonly string[] = []): Promise<HeldPlugin> {
    const child = spawn(python, [DRIVER, '--url', url, '--hold', '--hook-timeout', '0', ...extraArgs], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const plugin = new HeldPlugin(child);
    const ready = await plugin.next();
    if (ready.type !== 'ready') throw new Error(`driver did not start: ${JSON.stringify(ready)} ${plugin.stderr}`);
    plugin.ready = ready;
    return plugin;
  }

  private next(): Promise<DriverLine> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async command(text: string): Promise<DriverLine> {
    this.child.stdin?.write(`${text}\n`);
    return this.next();
  }

  async stats(): Promise<PluginStats> {
    return (await this.command('stats')).stats as PluginStats;
  }

  /** Flushes until the buffer is empty (each flush is bounded to 1 s by the plugin). */
  async flushAll(attempts = 20): Promise<PluginStats> {
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      const answer = await this.command('flush');
      const stats = answer.stats as PluginStats;
      if (stats.buffer_depth === 0 && stats.queue_depth === 0) return stats;
    }
    throw new Error('the plugin did not drain');
  }

  async stop(): Promise<void> {
    const closed = new Promise((resolve) => this.child.once('close', resolve));
    this.child.stdin?.end();
    await closed;
  }
}

/** Total of a nested {hook: {reason: n}} drop table. */
export const totalDropped = (dropped: Record<string, Record<string, number>>): number =>
  Object.values(dropped).reduce((sum, reasons) => sum + Object.values(reasons).reduce((a, b) => a + b, 0), 0);
