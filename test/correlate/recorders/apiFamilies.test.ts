/** The API recorder's declarations: which families are the agent's, which the sidecar's, which opt-in. */
import { describe, expect, it } from 'vitest';
import { API_FAMILIES, API_VALUES } from '../../../src/correlate/recorders/apiFamilies.js';

describe('API_FAMILIES', () => {
  it("declares the agent's provider-call families, two sidecar counters of what could not be measured, and the GenAI views as opt-in", () => {
    const byScope = (scope: string) => Object.values(API_FAMILIES).filter((spec) => spec.scope === scope).map((spec) => spec.name).sort();
    expect(byScope('delivery')).toEqual(['hermes_sidecar_output_speed_unmeasured_total', 'hermes_sidecar_time_to_first_chunk_unmeasured_total']);
    expect(byScope('agent')).toHaveLength(Object.keys(API_FAMILIES).length - 2);
    const optIn = Object.values(API_FAMILIES).filter((spec) => 'optIn' in spec).map((spec) => spec.name).sort();
    expect(optIn).toEqual(['gen_ai_client_operation_duration_seconds', 'gen_ai_client_token_usage']);
  });

  it('closes the unmeasured reasons and the GenAI operation and token types', () => {
    expect(API_VALUES.first_chunk_unmeasured_reason).toEqual(['after_failed_attempt']);
    expect(API_VALUES.output_speed_unmeasured_reason).toEqual(['no_interval', 'no_output_tokens']);
    expect([API_VALUES.gen_ai_operation, API_VALUES.gen_ai_token_type]).toEqual([['chat'], ['input', 'output']]);
  });
});
