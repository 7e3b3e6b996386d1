/**
 * One contract: the plugin's allow-lists (plugin/hermes_prometheus_bridge/contract.json, from
 * which the plugin derives them) and the sidecar's field readers (src/contract/events.ts) must
 * name the same fields for every hook. The readers are probed, not listed: every key a reader
 * touches is recorded, with values chosen so each branch (absent, present, nested object) runs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderContractDoc } from '../../scripts/contract-doc.js';
import { readEventData } from '../../src/contract/events.js';
import { BoundCheck } from '../../src/contract/bounds.js';
import { MAPPED_EVENTS } from '../../src/contract/hooks.js';
import { METRIC_NAMES } from '../../src/catalogue.js';
import { VALUES } from '../../src/contract/vocabulary.js';
import { readContractTable } from '../support/contractTable.js';

const table = readContractTable();

type Probe = 'absent' | 'present' | 'object';

/** A payload that records the keys read from it (prefixed by the path of nested objects). */
function recordingPayload(mode: Probe, reads: Set<string>, prefix = ''): Record<string, unknown> {
  return new Proxy<Record<string, unknown>>({}, {
    get(_target, key) {
      if (typeof key !== 'string') return undefined;
      reads.add(prefix + key);
      if (mode === 'absent') return undefined;
      return mode === 'present' ? 'x' : recordingPayload('absent', reads, `${prefix}${key}.`);
    },
    has(_target, key) {
      if (typeof key === 'string') reads.add(prefix + key);
      return mode !== 'absent';
    },
    ownKeys: () => [],
  });
}

/** Every field the sidecar's reader of `hook` touches; nested keys as `parent.key`. */
function fieldsRead(hook: string): Set<string> {
  const reads = new Set<string>();
  for (const mode of ['absent', 'present', 'object'] as const) readEventData(hook, recordingPayload(mode, reads), new BoundCheck());
  return reads;
}

/** What the plugin sends for `hook`: flat and observer registrations together, plus the fields it adds. */
function fieldsSent(hook: string): Set<string> {
  const entries = [table.hooks[hook], table.observer[hook]].filter((entry) => entry !== undefined);
  return new Set(entries.flatMap((entry) => [...Object.keys(entry.fields), ...Object.keys(entry.added ?? {})]));
}

const topLevel = (fields: Set<string>) => new Set([...fields].filter((field) => !field.includes('.')));
const sorted = (fields: Iterable<string>) => [...fields].sort();

const hermesHooks = sorted(new Set([...Object.keys(table.hooks), ...Object.keys(table.observer)]));

describe('plugin contract table and sidecar readers', () => {
  it('cover the same hooks: each hook the plugin sends has a reader, each reader a hook the plugin sends', () => {
    const mapped = MAPPED_EVENTS.filter((event) => event !== table.heartbeat.event);
    expect(sorted(mapped)).toEqual(hermesHooks);
  });

  it.each(hermesHooks)('%s: the plugin forwards exactly the fields the sidecar reads', (hook) => {
    expect(sorted(topLevel(fieldsRead(hook)))).toEqual(sorted(fieldsSent(hook)));
  });

  it.each(hermesHooks.filter((hook) => fieldsSent(hook).has('usage')))(
    '%s: the usage keys the plugin forwards are the ones the sidecar reads',
    (hook) => {
      const usageRead = [...fieldsRead(hook)].filter((field) => field.startsWith('usage.')).map((field) => field.slice(6));
      expect(sorted(usageRead)).toEqual(sorted([...table.usage_keys, ...Object.keys(table.usage_flags)]));
    },
  );

  it('reads the reported_usage_fields flags of exactly the keys the plugin forwards them for', () => {
    const reads = new Set<string>();
    const flags = new Proxy<Record<string, unknown>>({}, {
      get: (_target, key) => {
        if (typeof key === 'string') reads.add(key);
        return undefined;
      },
    });
    readEventData('post_api_request', { usage: { reported_usage_fields: flags } }, new BoundCheck());
    expect(sorted(reads)).toEqual(sorted(table.usage_flags.reported_usage_fields ?? []));
  });

  it('lists, per hook, only metrics the sidecar exports (the compatibility table of docs/contract.md)', () => {
    const listed = Object.values(table.hooks).flatMap((entry) => entry.metrics ?? []);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.filter((name) => !METRIC_NAMES.includes(name))).toEqual([]);
  });

  it('names every string field the plugin checks in the refused-field label, and nothing else', () => {
    const stringFields = new Set<string>(['hermes_version', 'profile']);
    for (const entry of [...Object.values(table.hooks), ...Object.values(table.observer)]) {
      for (const [name, field] of Object.entries(entry.fields)) {
        if ((field as { type?: string }).type === 'string') stringFields.add(name);
      }
    }
    expect(sorted(VALUES.refused_field)).toEqual(sorted(stringFields));
  });

  it('reads only heartbeat fields the plugin sends', () => {
    const read = topLevel(fieldsRead(table.heartbeat.event));
    expect(read.size).toBeGreaterThan(0);
    expect(sorted(read).filter((field) => !(field in table.heartbeat.fields))).toEqual([]);
  });

  it('docs/contract.md is generated from the current table (npm run docs:contract)', () => {
    expect(readFileSync(new URL('../../docs/contract.md', import.meta.url), 'utf8')).toBe(renderContractDoc());
  });

  it('notices a field the readers do not touch (the probe itself can fail)', () => {
    expect(fieldsRead('pre_tool_call').has('args')).toBe(false);
    expect(fieldsRead('post_approval_response').has('decided_by')).toBe(true);
  });
});
