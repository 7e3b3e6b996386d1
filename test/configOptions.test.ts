/** The option table: one row per setting drives its flag, environment variable, config-file key and --help. */
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_NAMES, envName, FLAGS, helpText, OPTIONS, SECRET_ENV } from '../src/configOptions.js';

describe('the option table', () => {
  it('has one row per flag, each a dotted lower-case name', () => {
    expect(new Set(FLAGS).size).toBe(OPTIONS.length);
    expect(FLAGS).toEqual(OPTIONS.map((option) => option.flag));
    for (const flag of FLAGS) expect(flag).toMatch(/^[a-z]+(?:[.-][a-z]+)+$/);
    expect(FLAGS).toContain('ingest.max-body-bytes');
    expect(FLAGS).toContain('web.max-connections');
  });

  it('keeps only the config file itself out of the config file', () => {
    expect(OPTIONS.filter((option) => 'inFile' in option).map((option) => option.flag)).toEqual(['config.file']);
  });
});

describe('environment names', () => {
  it('are HERMES_SIDECAR_ and the flag in upper case, dots and dashes as underscores', () => {
    expect(envName('web.listen-address')).toBe('HERMES_SIDECAR_WEB_LISTEN_ADDRESS');
    expect(envName('metrics.native-histogram-bucket-factor')).toBe('HERMES_SIDECAR_METRICS_NATIVE_HISTOGRAM_BUCKET_FACTOR');
  });

  it('are one per option plus the two variables that hold a secret itself', () => {
    expect(ENVIRONMENT_NAMES).toHaveLength(OPTIONS.length + 2);
    expect(new Set(ENVIRONMENT_NAMES).size).toBe(ENVIRONMENT_NAMES.length);
    expect(ENVIRONMENT_NAMES.slice(-2)).toEqual(['HERMES_SIDECAR_INGEST_TOKEN', 'HERMES_SIDECAR_WEBHOOK_SECRET']);
    expect(Object.values(SECRET_ENV)).toEqual(['HERMES_SIDECAR_INGEST_TOKEN', 'HERMES_SIDECAR_WEBHOOK_SECRET']);
    expect(ENVIRONMENT_NAMES).toContain('HERMES_SIDECAR_INGEST_TOKEN_FILE');
  });
});

describe('--help', () => {
  it('lists every option with its environment variable and default', () => {
    const help = helpText();
    for (const option of OPTIONS) {
      expect(help).toContain(`--${option.flag}=VALUE`);
      expect(help).toContain(`env ${envName(option.flag)}; default ${option.default ?? '(none)'}`);
    }
    expect(help).toContain('  --web.listen-address=VALUE\n      Address of the web listener (/metrics, /-/healthy, /-/ready).\n      env HERMES_SIDECAR_WEB_LISTEN_ADDRESS; default 0.0.0.0:9478\n');
    expect(help).toContain('env HERMES_SIDECAR_INGEST_TOKEN_FILE; default (none)');
  });

  it('starts with the usage of each command and ends with the secrets and the binary\'s own switches', () => {
    const lines = helpText().split('\n');
    expect(lines[0]).toBe('Usage: hermes-prometheus-sidecar [options]');
    expect(lines.filter((line) => line.includes('hermes-prometheus-sidecar'))).toHaveLength(4);
    expect(lines.filter((line) => /^ {2}--[a-z.-]+=VALUE$/.test(line))).toHaveLength(OPTIONS.length);
    expect(lines.slice(-5)).toEqual([
      '  HERMES_SIDECAR_INGEST_TOKEN, HERMES_SIDECAR_WEBHOOK_SECRET',
      '      Environment variables holding the ingest token and the webhook secret themselves.',
      '  --help     Show this help.',
      '  --version  Show the version.',
      '',
    ]);
  });
});
