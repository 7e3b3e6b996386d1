/**
 * Process lifecycle only (loaded by main.ts once the startup footprint settings are in place):
 * read the configuration, start both listeners, sweep on a timer, and on SIGTERM/SIGINT stop
 * accepting (503 + Retry-After), drain the queue, close the listeners and exit 0.
 */
import { restoreWhenBusy, startupDone } from './startupFootprint.js';
import { createIngestServer, createSidecar, errorFields, webListenerLimits } from './app.js';
import { ConfigError, loadConfig, type ListenAddress } from './config.js';
import { ENVIRONMENT_NAMES, helpText } from './configOptions.js';
import { unknownEnvironmentWarnings } from './environmentNames.js';
import { createWebServer } from './web/server.js';
import { boundAddress, closeServer, listenOn } from './net/listener.js';
import { createLogger } from './log.js';
import { VERSION, versionText } from './version.js';

const CLOSE_GRACE_MS = 2000;

const BIND_PROBLEMS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address does not belong to this machine',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

const showAddress = ({ host, port }: ListenAddress): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** Binds one listener; a failure names the listener, its address and the setting that chose it. */
async function bind<T>(listener: 'web' | 'ingest', address: ListenAddress, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem = code === undefined ? (error as Error).message : `${Object.hasOwn(BIND_PROBLEMS, code) ? BIND_PROBLEMS[code] : 'binding failed'} (${code})`;
    throw new ConfigError(`The ${listener} listener cannot listen on ${showAddress(address)} (--${listener}.listen-address): ${problem}.`);
  }
}

async function runSidecar(argv: readonly string[]): Promise<void> {
  const config = loadConfig({ argv, env: process.env });
  const logger = createLogger(config.logLevel, config.logFormat);
  for (const warning of unknownEnvironmentWarnings(process.env, ENVIRONMENT_NAMES)) logger.warn({ code: 'unknown_environment_variable' }, warning);
  const sidecar = createSidecar(config, { logger });

  const webServer = await createWebServer(sidecar.webApp, {
    configFile: config.web.configFile,
    logger,
    metrics: sidecar.metrics,
    limits: webListenerLimits(config),
    connectionMetrics: sidecar.metrics,
  });
  const web = await bind('web', config.web.listen, () => listenOn(webServer.server, config.web.listen));
  const ingest = await bind('ingest', config.ingest.listen, () => listenOn(createIngestServer(sidecar), config.ingest.listen));
  const sweeper = setInterval(() => {
    sidecar.sweep().catch((error: unknown) => logger.error({ code: 'sweep_failed', ...errorFields(error) }, 'a TTL sweep failed'));
  }, config.correlator.sweepIntervalSeconds * 1000);
  sweeper.unref();
  // An idle sidecar keeps the startup footprint settings; the first busy second ends them.
  const stopWatching = restoreWhenBusy(() => logger.debug({ code: 'busy' }, "busy: V8's optimizing compiler and young-generation growth are on"));

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining the ingest queue');
    await sidecar.drained();
    await closeServer(ingest, CLOSE_GRACE_MS);
    await closeServer(web, CLOSE_GRACE_MS);
    await webServer.close();
    clearInterval(sweeper);
    stopWatching();
    logger.info({ applied_events: sidecar.dispatcher.applied, applied_heartbeats: sidecar.dispatcher.heartbeats }, 'stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGHUP', () => void webServer.reload());
  // Logged last: whoever waits for this line may signal the process at once.
  logger.info(
    {
      web: boundAddress(web), ingest: boundAddress(ingest), telemetry_path: config.web.telemetryPath, version: VERSION,
      ingest_auth: config.ingest.token === undefined ? 'none' : 'bearer token',
      webhooks: config.webhook.secret === undefined ? 'off (no secret)' : 'on (signed)',
    },
    'listening',
  );
}

async function main(argv: readonly string[]): Promise<number | undefined> {
  // A subcommand is one-off work with no idle footprint to keep: V8's own settings from the start.
  if (argv[0] === 'install-plugin') {
    startupDone();
    // Loaded only for the subcommand: a running sidecar never needs it (nor its YAML editing).
    const { defaultPluginSourceDir, runInstallPlugin } = await import('./cli/installPlugin.js');
    return runInstallPlugin(argv.slice(1), {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      env: process.env,
      pluginSourceDir: defaultPluginSourceDir(),
    });
  }
  if (argv[0] === 'backfill') {
    startupDone();
    // Loaded only for the subcommand, like install-plugin: it brings the SQLite binding.
    const { runBackfill } = await import('./cli/backfill/run.js');
    return runBackfill(argv.slice(1), {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      stderrIsTTY: process.stderr.isTTY === true,
      env: process.env,
      nowMs: () => Date.now(),
    });
  }
  if (argv[0] === 'ready') {
    startupDone();
    const { runReady } = await import('./cli/ready.js');
    return runReady(argv.slice(1), {
      stderr: (text) => process.stderr.write(text),
      env: process.env,
      fetch,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      nowMs: () => Date.now(),
    });
  }
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText());
    return 0;
  }
  if (argv.includes('--version')) {
    process.stdout.write(versionText());
    return 0;
  }
  await runSidecar(argv);
  return undefined;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof ConfigError ? error.message : `failed to start: ${(error as Error).message}`;
    process.stderr.write(`hermes-prometheus-sidecar: ${message}\n`);
    process.exit(2);
  },
);
