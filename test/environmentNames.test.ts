/** Misspelt HERMES_SIDECAR_* variables: warned about with the closest setting, never silently ignored. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_NAMES } from '../src/configOptions.js';
import { FOREIGN_ENVIRONMENT_NAMES, unknownEnvironmentWarnings } from '../src/environmentNames.js';
import { startSidecarProcess } from './support/process.js';

describe('unknown HERMES_SIDECAR_* variables', () => {
  it('names a misspelt variable and the setting it most likely meant', () => {
    expect(unknownEnvironmentWarnings({ HERMES_SIDECAR_WEBHOOK_SECRT: 'x', HERMES_SIDECAR_ZZZ: '1', PATH: '/bin' }, ENVIRONMENT_NAMES)).toEqual([
      'HERMES_SIDECAR_WEBHOOK_SECRT is not a setting of the sidecar and is ignored: did you mean HERMES_SIDECAR_WEBHOOK_SECRET? (see --help for every variable)',
      'HERMES_SIDECAR_ZZZ is not a setting of the sidecar and is ignored (see --help for every variable)',
    ]);
  });

  it("is quiet about every setting's variable, the secrets, and the plugin's and the build's", () => {
    const env = Object.fromEntries([...ENVIRONMENT_NAMES, ...FOREIGN_ENVIRONMENT_NAMES].map((name) => [name, '1']));
    expect(Object.keys(env)).toContain('HERMES_SIDECAR_INGEST_TOKEN');
    expect(Object.keys(env)).toContain('HERMES_SIDECAR_METRICS_MAX_SERIES');
    expect(unknownEnvironmentWarnings(env, ENVIRONMENT_NAMES)).toEqual([]);
  });

  it("knows the bridge plugin's variables as its plugin.yaml declares them", () => {
    const manifest = readFileSync(new URL('../plugin/hermes_prometheus_bridge/plugin.yaml', import.meta.url), 'utf8');
    const declared = /^optional_env:\n((?: {2}- \S+\n)+)/m.exec(manifest)?.[1]?.match(/HERMES_SIDECAR_\w+/g) ?? [];
    expect(declared).toHaveLength(11);
    expect(FOREIGN_ENVIRONMENT_NAMES).toEqual(expect.arrayContaining(declared));
  });

  it('the real binary logs the warning, and its "listening" line says whether ingest auth and webhooks are on', async () => {
    const sidecar = await startSidecarProcess([], { HERMES_SIDECAR_WEBHOOK_SECRT: 'typo', HERMES_SIDECAR_INGEST_TOKEN: 't0ken' });
    try {
      const warning = sidecar.logs.find((line) => line.code === 'unknown_environment_variable');
      expect(warning?.msg).toBe('HERMES_SIDECAR_WEBHOOK_SECRT is not a setting of the sidecar and is ignored: did you mean HERMES_SIDECAR_WEBHOOK_SECRET? (see --help for every variable)');
      const listening = sidecar.logs.find((line) => line.msg === 'listening');
      expect([listening?.ingest_auth, listening?.webhooks]).toEqual(['bearer token', 'off (no secret)']);
      expect(JSON.stringify(sidecar.logs)).not.toContain('typo');
    } finally {
      await sidecar.stop();
    }
  });
});
