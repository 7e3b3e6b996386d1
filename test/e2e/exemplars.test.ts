/**
 * Exemplars through a real Prometheus: Debian's prometheus with `--enable-feature=exemplar-storage`
 * scrapes the sidecar binary (it asks for OpenMetrics first), and /api/v1/query_exemplars returns
 * each call's content-free ids on the API, tool and turn duration histograms, with the time the
 * call was observed. The ids never appear as series labels.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSidecarProcess, type SidecarProcess } from '../support/process.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { prometheus as prometheusTool } from '../support/tools.js';

const tool = prometheusTool();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ExemplarSeries {
  readonly seriesLabels: Record<string, string>;
  readonly exemplars: readonly { labels: Record<string, string>; value: string; timestamp: number }[];
}

describe.skipIf(tool.path === undefined)(`exemplars in a real Prometheus${tool.skipReason ? ` (${tool.skipReason})` : ''}`, () => {
  let sidecar: SidecarProcess;
  let prometheus: RunningPrometheus;
  const now = Math.floor(Date.now() / 1000);

  const exemplars = async (expr: string): Promise<ExemplarSeries[]> => {
    const url = `${prometheus.url}/api/v1/query_exemplars?query=${encodeURIComponent(expr)}&start=${now - 600}&end=${now + 600}`;
    const body = (await (await fetch(url)).json()) as { status: string; data: ExemplarSeries[] };
    expect(body.status).toBe('success');
    return body.data;
  };

  beforeAll(async () => {
    sidecar = await startSidecarProcess(['--metrics.semconv=true']);
    const lines = [
      { event: 'pre_llm_call', observed_at: now - 5, turn_id: 'T9', session_id: 'S1', platform: 'cli', model: 'm' },
      { event: 'post_api_request', observed_at: now - 4, api_request_id: 'T9:api:1', turn_id: 'T9', provider: 'anthropic', model: 'm', api_duration: 0.7 },
      { event: 'api_request_error', observed_at: now - 3, api_request_id: 'T9:api:2', turn_id: 'T9', provider: 'anthropic', model: 'm', api_duration: 30, reason: 'timeout' },
      { event: 'post_tool_call', observed_at: now - 2, tool_call_id: 'toolu_7', turn_id: 'T9', tool_name: 'terminal', status: 'ok', duration_ms: 40 },
      { event: 'on_session_end', observed_at: now - 1, turn_id: 'T9', session_id: 'S1', platform: 'cli', model: 'm', completed: true },
    ];
    const answer = await fetch(`${sidecar.ingest}/v1/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson' },
      body: lines.map((line) => JSON.stringify(line)).join('\n'),
    });
    expect(answer.status).toBe(202);
    prometheus = await startPrometheus(tool.path ?? 'prometheus', new URL(sidecar.web).host, 1, 0, ['--enable-feature=exemplar-storage']);
    for (let waited = 0; waited < 30; waited += 1) {
      if ((await exemplars('hermes_turn_duration_seconds_bucket')).length > 0) break;
      await sleep(1000);
    }
  }, 60_000);

  afterAll(async () => {
    await prometheus?.stop();
    await sidecar?.stop();
  });

  /** Every exemplar of a histogram as `le → ids @ value, time`. */
  const summary = async (histogram: string) =>
    (await exemplars(`${histogram}_bucket`))
      .flatMap((series) => series.exemplars.map((exemplar) => ({ le: series.seriesLabels.le, ...exemplar })))
      .sort((a, b) => a.timestamp - b.timestamp);

  it('returns the API call ids on the API duration histogram, in the bucket each call landed in', async () => {
    expect(await summary('hermes_api_request_duration_seconds')).toEqual([
      { le: '1.28', labels: { api_request_id: 'T9:api:1', turn_id: 'T9' }, value: '0.7', timestamp: now - 4 },
      { le: '40.96', labels: { api_request_id: 'T9:api:2', turn_id: 'T9' }, value: '30', timestamp: now - 3 },
    ]);
  });

  it('returns them on the OpenTelemetry operation duration too', async () => {
    expect(await summary('gen_ai_client_operation_duration_seconds')).toEqual([
      { le: '1.28', labels: { api_request_id: 'T9:api:1', turn_id: 'T9' }, value: '0.7', timestamp: now - 4 },
      { le: '40.96', labels: { api_request_id: 'T9:api:2', turn_id: 'T9' }, value: '30', timestamp: now - 3 },
    ]);
  });

  it('returns the tool call and turn ids on the tool and turn duration histograms', async () => {
    expect(await summary('hermes_tool_call_duration_seconds')).toEqual([
      { le: '0.05', labels: { tool_call_id: 'toolu_7', turn_id: 'T9' }, value: '0.04', timestamp: now - 2 },
    ]);
    expect(await summary('hermes_turn_duration_seconds')).toEqual([
      { le: '6.4', labels: { turn_id: 'T9', session_id: 'S1' }, value: '4', timestamp: now - 1 },
    ]);
  });

  it('keeps ids out of the series labels', async () => {
    for (const label of ['api_request_id', 'turn_id', 'tool_call_id', 'session_id']) {
      const found = await prometheus.query(`count({__name__=~"hermes_.+|gen_ai_.+", ${label}!=""})`);
      expect({ label, result: found.data?.result }).toEqual({ label, result: [] });
    }
  });
});
