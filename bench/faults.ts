/**
 * The long fault-injection variants: the real plugin (Python, through the Hermes dispatch
 * harness) against the real sidecar binary, round after round, with exact accounting of what
 * the plugin emitted, what each sidecar applied, and what was counted as dropped or lost.
 *
 *   npx tsx bench/faults.ts [--rounds 5] [--out bench/faults-results.md]
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { HeldPlugin, totalDropped, type PluginStats } from '../test/support/driver.js';
import { appliedEvents, droppedTotal, scrapeSamples } from '../test/support/accounting.js';
import type { Samples } from '../test/support/exposition.js';
import { startSidecarProcess, type SidecarProcess } from '../test/support/process.js';
import { retryOnAddressInUse } from '../test/support/ports.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, out: { type: 'string', default: 'bench/faults-results.md' }, python: { type: 'string', default: 'python3' } },
});
const rounds = Number(values.rounds);
const python = values.python ?? 'python3';
const pluginEnv = { HERMES_SIDECAR_HEARTBEAT_INTERVAL: '0.5', HERMES_SIDECAR_TIMEOUT: '0.5' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Row {
  readonly fault: string;
  readonly emitted: number;
  readonly applied: number;
  readonly pluginDropped: number;
  readonly sidecarDropped: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly note: string;
}

/** A second sidecar on the ingest port of one just stopped, where the plugin keeps sending. */
function restartOn(stopped: SidecarProcess): Promise<SidecarProcess> {
  return retryOnAddressInUse(() => startSidecarProcess([`--ingest.listen-address=${new URL(stopped.ingest).host}`]));
}

/** A result row from the plugin's final stats and the (last) sidecar's samples. */
function row(fault: string, final: PluginStats, samples: Samples, appliedBefore: number, note: string): Row {
  return {
    fault,
    emitted: final.events_numbered,
    applied: appliedBefore + appliedEvents(samples),
    pluginDropped: totalDropped(final.dropped),
    sidecarDropped: droppedTotal(samples),
    lost: samples.get('hermes_sidecar_events_lost_total') ?? 0,
    duplicates: samples.get('hermes_sidecar_events_duplicate_total') ?? 0,
    note,
  };
}

/** Stop (SIGKILL or SIGTERM) under load, restart on the same ports: acknowledged + applied after = emitted. */
async function stopUnderLoad(signal: 'SIGKILL' | 'SIGTERM'): Promise<Row> {
  const first = await startSidecarProcess();
  const plugin = await HeldPlugin.start(python, `${first.ingest}/v1/events`, pluginEnv);
  const emitting = plugin.command('events 5000 5000');
  await sleep(400);
  await first.stop(signal);
  await emitting;
  const atStop: PluginStats = await plugin.stats();
  const appliedBefore = signal === 'SIGTERM' ? Number(first.logs.find((line) => line.msg === 'stopped')?.applied_events) : atStop.events_delivered;
  const second = await restartOn(first);
  const final = await plugin.flushAll();
  await sleep(1200);
  const samples = await scrapeSamples(second);
  await plugin.stop();
  await second.stop();
  return row(`${signal} under load, restart`, final, samples, appliedBefore, signal === 'SIGTERM' ? `first sidecar logged ${appliedBefore} applied` : `first sidecar acknowledged ${appliedBefore}`);
}

/** Sidecar down longer than the retry buffer holds. */
async function overflow(): Promise<Row> {
  const first = await startSidecarProcess();
  const plugin = await HeldPlugin.start(python, `${first.ingest}/v1/events`, { ...pluginEnv, HERMES_SIDECAR_BUFFER_SIZE: '1000' });
  await plugin.command('events 500 0');
  await plugin.flushAll();
  await first.stop('SIGKILL');
  await plugin.command('events 4000 0');
  const second = await restartOn(first);
  const final = await plugin.flushAll();
  await sleep(1200);
  const samples = await scrapeSamples(second);
  await plugin.stop();
  await second.stop();
  return row('sidecar down past the buffer (1000)', final, samples, 500, 'true loss = emitted − applied');
}

/** A sidecar that stops answering (SIGSTOP) for a while. */
async function hung(): Promise<Row> {
  const sidecar = await startSidecarProcess();
  const plugin = await HeldPlugin.start(python, `${sidecar.ingest}/v1/events`, pluginEnv);
  sidecar.child.kill('SIGSTOP');
  const started = performance.now();
  await plugin.command('events 5000 0');
  const emitSeconds = (performance.now() - started) / 1000;
  await sleep(2000);
  sidecar.child.kill('SIGCONT');
  const final = await plugin.flushAll();
  await sleep(1200);
  const samples = await scrapeSamples(sidecar);
  await plugin.stop();
  await sidecar.stop();
  return row('sidecar hung (SIGSTOP 2 s+)', final, samples, 0, `5000 hook calls took ${emitSeconds.toFixed(2)} s while it hung`);
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    for (const run of [() => stopUnderLoad('SIGKILL'), () => stopUnderLoad('SIGTERM'), overflow, hung]) {
      const row = await run();
      rows.push(row);
      console.log(JSON.stringify({ round, ...row }));
    }
  }
  const table = rows.map(
    (row) => `| ${row.fault} | ${row.emitted} | ${row.applied} | ${row.pluginDropped} | ${row.sidecarDropped} | ${row.lost} | ${row.duplicates} | ${row.emitted === row.applied + row.pluginDropped ? 'yes' : '**no**'} | ${row.note} |`,
  );
  writeFileSync(
    values.out ?? 'bench/faults-results.md',
    [
      '# Fault-injection results',
      '',
      `Command: \`npx tsx bench/faults.ts --rounds ${rounds}\` on ${new Date().toISOString()};`,
      `machine ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}.`,
      '',
      'The real plugin (plugin/tests/drive_conversation.py, hold mode) against the real sidecar binary.',
      '"emitted" counts events that entered the plugin (sequence numbers); "applied" adds what each',
      'sidecar process applied (after a SIGKILL, what the first one acknowledged — a 202 waits for the',
      'batch to be applied); "dropped" is the plugin\'s own count and the sidecar\'s',
      '`hermes_plugin_callbacks_dropped_total`; "lost" is `hermes_sidecar_events_lost_total`.',
      '',
      '| fault | emitted | applied | dropped (plugin) | dropped (sidecar) | lost | duplicates | emitted = applied + dropped | note |',
      '|---|---|---|---|---|---|---|---|---|',
      ...table,
      '',
    ].join('\n'),
  );
  console.log(`wrote ${values.out}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
