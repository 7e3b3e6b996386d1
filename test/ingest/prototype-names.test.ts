/**
 * Client text is never looked up on a plain object: every name Object.prototype carries
 * (`constructor`, `__proto__`, `toString`, `hasOwnProperty`, …) gets the answer any unknown
 * name gets, through every entry point that takes a name from a client or a file.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { series } from '../support/exposition.js';
import { startTestSidecar } from '../support/sidecar.js';

const NAMES = Object.getOwnPropertyNames(Object.prototype);
const SECRET = 'prototype-names-secret';
const directory = mkdtempSync(join(tmpdir(), 'sidecar-prototype-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

/** Own properties only: an object literal would turn `__proto__` into the prototype. */
const withKey = (key: string, value: unknown): Record<string, unknown> => Object.fromEntries([[key, value]]);

describe.each(NAMES)('%s', (name) => {
  it('as a Content-Type or Content-Encoding is 415 on both routes', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': file('secret', SECRET) });
    const line = '{"event":"post_tool_call","tool_name":"t"}';
    const events = await harness.ingest.post('/v1/events').set('Content-Type', name).send(line);
    const hooks = await harness.ingest.post('/v1/hooks').set('Content-Type', name).send(line);
    const encoding = await harness.ingest.post('/v1/events').set({ 'Content-Type': 'application/x-ndjson', 'Content-Encoding': name }).send(line);
    expect([events.status, hooks.status, encoding.status]).toEqual([415, 415, 415]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_rejected_total', { reason: 'unsupported_media_type' }))).toBe(3);
    expect(samples.get(series('hermes_tool_calls_total', { tool: 't', status: 'unknown' }))).toBeUndefined();
  });

  it('as an event name in any shape, or a webhook hook_event_name, is accepted and counted as other', async () => {
    const harness = startTestSidecar({ 'webhook.secret-file': file('secret', SECRET) });
    const response = await harness.postNdjson([{ event: name, data: {} }, { event: name }, { hook: name }, { event: name, instance: 'i', seq: 1, data: {} }]);
    expect(response.body).toMatchObject({ accepted: 4, rejected: 0 });
    const body = JSON.stringify({ hook_event_name: name, extra: {}, delivery_id: 'd1' });
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const hook = await harness.ingest.post('/v1/hooks').set({ 'Content-Type': 'application/json', 'X-Hermes-Signature-256': signature }).send(body);
    expect(hook.body).toEqual({ accepted: 1, rejected: 0, errors: [] });
    const samples = await harness.samples();
    expect(samples.get(series('hermes_sidecar_events_ignored_total', { event: 'other' }))).toBe(5);
    expect(samples.get(series('hermes_sidecar_events_received_total', { source: 'webhook', event: 'other' }))).toBe(1);
  });

  it('as a field name is ignored; as a label value it is itself for an open label and other for a closed one', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([
      { event: 'post_tool_call', data: { ...withKey(name, 1), tool_name: name, status: name, tool_call_id: name } },
      { event: 'post_approval_response', data: { surface: name, choice: name, pattern_key: name } },
      { event: 'session_event', data: { event: name } },
    ]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_tool_calls_total', { tool: name, status: 'other' }))).toBe(1);
    expect(samples.get(series('hermes_approval_decisions_total', { surface: 'other', pattern_key: name, choice: 'other' }))).toBe(1);
    expect(samples.get(series('hermes_session_events_total', { event: 'other' }))).toBe(1);
  });

  it('as a heartbeat drop hook or reason folds into other', async () => {
    const harness = startTestSidecar();
    await harness.postNdjson([{ event: 'plugin_heartbeat', instance: 'i', data: { interval_seconds: 5, dropped: withKey(name, withKey(name, 3)) } }]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_plugin_callbacks_dropped_total', { hook: 'other', reason: 'other' }))).toBe(3);
    expect(samples.get(series('hermes_sidecar_heartbeat_keys_folded_total', { key: 'hook' }))).toBe(1);
  });

  it('as an Accept or Accept-Encoding header gets the text format, not gzipped', async () => {
    const harness = startTestSidecar();
    const response = await harness.web.get('/metrics').set({ Accept: name, 'Accept-Encoding': name });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(response.headers['content-encoding']).toBeUndefined();
  });

  it('as a config file key is an unknown key; as a label rewrite key it is rewritten', async () => {
    const load = (settings: object) => () =>
      loadConfig({ argv: [`--config.file=${file('config.yaml', JSON.stringify(settings))}`], env: {} });
    expect(load({ ingest: withKey(name, 1) })).toThrow(/is not a known key/);
    expect(load(withKey(name, 1))).toThrow(/is not a known key/);
    expect(load({ labels: withKey(name, { cap: 1 }) })).toThrow(/is not a known key/);
    expect(load({ labels: { model: withKey(name, 1) } })).toThrow(/is not a known key/);
    expect(load({ prices: { p: { m: { input: 1, output: 1, ...withKey(name, 1) } } } })).toThrow(/is not a known key/);
    const harness = startTestSidecar({}, { configFile: file('rewrite.yaml', JSON.stringify({ labels: { model: { rewrite: withKey(name, 'rewritten') } } })) });
    await harness.postNdjson([{ event: 'post_api_request', provider: 'p', model: name }]);
    const samples = await harness.samples();
    expect(samples.get(series('hermes_api_requests_total', { kind: 'main', provider: 'p', model: 'rewritten', outcome: 'success' }))).toBe(1);
  });
});
