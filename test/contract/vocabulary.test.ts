/** The event contract's vocabulary: each closed set declared once, its values distinct and never a fallback. */
import { describe, expect, it } from 'vitest';
import { VALUES } from '../../src/contract/vocabulary.js';
import { OTHER, UNKNOWN } from '../../src/wireText.js';

const SETS = Object.entries(VALUES) as [string, readonly string[]][];

describe('the vocabulary', () => {
  it('lists each value of a set once, and never the fallbacks unknown and other, but in the exit reasons Hermes itself emits', () => {
    expect(SETS.length).toBeGreaterThan(20);
    for (const [name, values] of SETS) {
      expect(values.length, name).toBeGreaterThan(0);
      expect(new Set(values).size, name).toBe(values.length);
      expect(values, name).not.toContain(OTHER);
      // turn_exit_reason is the always-kept part of the open exit_reason label, not a closed set:
      // Hermes 0.21 emits `unknown` itself.
      if (name !== 'turn_exit_reason') expect(values, name).not.toContain(UNKNOWN);
    }
    expect(VALUES.turn_exit_reason).toContain(UNKNOWN);
  });

  it('holds only label-safe values: lower-case identifiers, and no empty string', () => {
    for (const [name, values] of SETS) for (const value of values) expect(value, name).toMatch(/^[a-z0-9][a-z0-9_.]*$/);
  });

  it('knows every event once: mapped hooks, envelope events, the heartbeat and the ignored ones, which map to nothing', () => {
    const mapped = VALUES.plugin_hook;
    expect(VALUES.event).toEqual([...mapped, ...VALUES.envelope_event, 'plugin_heartbeat', ...VALUES.ignored_event]);
    expect(mapped.filter((hook) => (VALUES.ignored_event as readonly string[]).includes(hook))).toEqual([]);
    expect(mapped).toContain('post_tool_call');
    expect(mapped).toHaveLength(17);
    expect(VALUES.ignored_event).toContain('post_llm_call');
  });

  it('splits tokens as Hermes reports them, and outcomes as the metrics count them', () => {
    expect(VALUES.token_type).toEqual(['input', 'cache_read', 'cache_write', 'output', 'reasoning']);
    expect(VALUES.api_outcome).toEqual(['success', 'error']);
    expect(VALUES.retryable).toEqual(['true', 'false']);
    expect(VALUES.event_source).toEqual(['plugin', 'envelope', 'flat', 'webhook']);
  });
});
