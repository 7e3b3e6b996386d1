/**
 * Synthetic Hermes traffic: several simulated agents (providers and models, streaming, retries
 * and errors, a tool mix with failures, approvals on each surface, subagents, sessions), sent
 * as bridge-plugin NDJSON lines with per-agent instance and seq, plus heartbeats. Seeded, so a
 * run is reproducible. Serves the demo, the real-Prometheus end-to-end test and the benchmarks.
 *
 * Optional faults make every delivery-health series move: skipped sequence numbers (lost),
 * resent batches (duplicates), heartbeat drop counters, an envelope-variant agent, and tool-name
 * churn past the label cap.
 */

export type Line = Record<string, unknown>;

export interface TrafficOptions {
  readonly seed?: number;
  readonly agents?: number;
  /** Probability that a provider attempt fails (0..1). */
  readonly errorRate?: number;
  /** Adds the envelope-variant events, sequence gaps, heartbeat drops and tool-name churn. */
  readonly faults?: boolean;
}

/** mulberry32: a small seeded PRNG, so runs are reproducible. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODELS: readonly [string, string][] = [
  ['openrouter', 'anthropic/claude-sonnet-4.6'],
  ['openrouter', 'google/gemini-3.5-flash'],
  ['anthropic', 'claude-opus-4'],
  ['openai', 'gpt-5'],
];
const PLATFORMS = ['cli', 'telegram', 'discord', 'tui'] as const;
const TOOLS = ['terminal', 'read_file', 'write_file', 'search_files', 'web_search', 'memory', 'delegate_task'] as const;
const ERRORS: readonly { reason: string; status: number; retryable: boolean }[] = [
  { reason: 'rate_limit', status: 429, retryable: true },
  { reason: 'server_error', status: 503, retryable: true },
  { reason: 'timeout', status: 408, retryable: true },
  { reason: 'context_overflow', status: 400, retryable: false },
];
const TOOL_OUTCOMES: readonly [number, string, string | null][] = [
  [0.85, 'ok', null],
  [0.92, 'error', 'tool_error'],
  [0.95, 'blocked', 'plugin_block'],
  [0.97, 'cancelled', 'user_interrupt'],
  [1, 'timeout', 'tool_timeout'],
];
const CHOICES: Record<string, readonly string[]> = {
  cli: ['once', 'session', 'always', 'deny'],
  gateway: ['once', 'deny', 'timeout'],
  smart: ['smart_approve', 'smart_deny'],
};

/** One turn in this many is interrupted by /stop. */
const INTERRUPT_EVERY = 20;
/** Every this many sessions, one arrives without its on_session_start, as Hermes skips overlapping ones. */
const START_SKIPPED_EVERY = 8;
/** The context window every generated model reports, in tokens. */
const CONTEXT_LENGTH = 200_000;

interface Agent {
  readonly instance: string;
  seq: number;
  session: string;
  turn: number;
  readonly platform: string;
  readonly provider: string;
  readonly model: string;
  readonly dropped: Record<string, Record<string, number>>;
}

export class TrafficModel {
  private readonly random: () => number;
  private readonly agents: Agent[];
  private errorRate: number;
  readonly faults: boolean;
  private clock = Date.now() / 1000;
  private ids = 0;
  /** Lines sent with a sequence number, and how many the faults deliberately skipped. */
  emitted = 0;
  skipped = 0;
  private sessionsBegun = 0;
  /** Turns generated: every INTERRUPT_EVERY-th is followed by a /stop (agent_loop_stopped). */
  private turns = 0;

  constructor(options: TrafficOptions = {}) {
    this.random = seededRandom(options.seed ?? 1);
    this.errorRate = options.errorRate ?? 0.05;
    this.faults = options.faults ?? false;
    this.agents = Array.from({ length: options.agents ?? 4 }, (_, index) => {
      const [provider, model] = MODELS[index % MODELS.length] ?? MODELS[0]!;
      return {
        instance: `agent-${options.seed ?? 1}-${index}`,
        seq: 0,
        session: `s-${index}-0`,
        turn: 0,
        platform: PLATFORMS[index % PLATFORMS.length] ?? 'cli',
        provider,
        model,
        dropped: {},
      };
    });
  }

  setErrorRate(rate: number): void {
    this.errorRate = rate;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] ?? items[0]!;
  }

  private nextId(prefix: string): string {
    this.ids += 1;
    return `${prefix}_${this.ids}`;
  }

  private line(agent: Agent, event: string, data: Record<string, unknown>, advance = 0.05): Line {
    this.clock += advance;
    agent.seq += 1;
    // A fault run skips a sequence number now and then: the sidecar must count it as lost.
    if (this.faults && this.random() < 0.01) {
      agent.seq += 1;
      this.skipped += 1;
    }
    this.emitted += 1;
    return { event, observed_at: this.clock, instance: agent.instance, seq: agent.seq, data };
  }

  /** One user turn of one agent, as the plugin would send it. */
  turn(agentIndex: number): Line[] {
    const agent = this.agents[agentIndex % this.agents.length]!;
    const lines: Line[] = [];
    const base = { session_id: agent.session, platform: agent.platform, model: agent.model };
    // Hermes skips an on_session_start that overlaps another (its hook gate keys on ids that hook
    // lacks): every eighth session arrives without one and is counted from its first turn.
    if (agent.turn === 0 && this.sessionsBegun++ % START_SKIPPED_EVERY !== START_SKIPPED_EVERY - 1) {
      lines.push(this.line(agent, 'on_session_start', base));
    }
    agent.turn += 1;
    const turnId = this.nextId('turn');
    lines.push(this.line(agent, 'pre_llm_call', { ...base, turn_id: turnId, is_first_turn: agent.turn === 1 }));
    if (agent.turn === 1) lines.push(...this.auxiliaryCall(agent));
    const calls = 1 + Math.floor(this.random() * 3);
    let failedTurn = false;
    for (let call = 1; call <= calls && !failedTurn; call += 1) {
      failedTurn = !this.apiCall(agent, turnId, call, lines);
      if (!failedTurn && call < calls) lines.push(...this.tools(agent, turnId));
    }
    if (this.random() < 0.1) lines.push(...this.approval(agent, turnId));
    if (this.random() < 0.05) lines.push(...this.subagent(agent, turnId));
    const maxed = !failedTurn && this.random() < 0.03;
    lines.push(
      this.line(agent, 'on_session_end', {
        ...base,
        turn_id: turnId,
        completed: !failedTurn && !maxed,
        failed: failedTurn,
        interrupted: false,
        turn_exit_reason: failedTurn ? 'api_error' : maxed ? 'max_iterations_reached(90/90)' : 'text_response(finish_reason=stop)',
      }, 0.2),
    );
    // Counted, not drawn: the random stream (and so every seeded test's traffic) stays as it was.
    this.turns += 1;
    if (this.turns % INTERRUPT_EVERY === 0) {
      lines.push(this.line(agent, 'agent_loop_stopped', { session_key: `${agent.platform}:${agent.session}`, platform: agent.platform, reason: 'user_stop', invalidation_reason: 'stop_command' }));
    }
    if (agent.turn >= 5 + Math.floor(this.random() * 5)) lines.push(...this.rotateSession(agent));
    return lines;
  }

  /** Attempts of one logical call; false when it ended in a non-retried error. */
  private apiCall(agent: Agent, turnId: string, call: number, lines: Line[]): boolean {
    const requestId = `${turnId}:api:${call}`;
    const startedAt = this.clock;
    const identity = { session_id: agent.session, turn_id: turnId, api_request_id: requestId, platform: agent.platform, provider: agent.provider, model: agent.model, api_mode: 'chat_completions', api_call_count: call };
    for (let retry = 0; retry <= 3; retry += 1) {
      lines.push(this.line(agent, 'pre_api_request', { ...identity, retry_count: retry, started_at: startedAt }));
      if (this.random() < this.errorRate) {
        const error = this.pick(ERRORS);
        const duration = 0.2 + this.random() * 2;
        lines.push(this.line(agent, 'api_request_error', { ...identity, api_duration: this.clock + duration - startedAt, started_at: startedAt, status_code: error.status, retry_count: retry, max_retries: 3, retryable: error.retryable, reason: error.reason }, duration));
        if (!error.retryable || retry === 3) return false;
        continue;
      }
      const duration = 0.5 + this.random() * 8;
      const input = 200 + Math.floor(this.random() * 3000);
      const cacheRead = Math.floor(this.random() * 20000);
      const output = 20 + Math.floor(this.random() * 800);
      lines.push(this.line(agent, 'post_api_request', {
        ...identity,
        api_duration: this.clock + duration - startedAt,
        started_at: startedAt,
        first_chunk_at: startedAt + 0.1 + this.random() * 1.5,
        // A Hermes that passes the context window (post_api_request context_length).
        context_length: CONTEXT_LENGTH,
        finish_reason: this.random() < 0.6 ? 'tool_calls' : this.random() < 0.95 ? 'stop' : 'length',
        usage: { input_tokens: input, cache_read_tokens: cacheRead, cache_write_tokens: Math.floor(this.random() * 500), output_tokens: output, reasoning_tokens: Math.floor(output * this.random() * 0.3), prompt_tokens: input + cacheRead },
      }, duration));
      return true;
    }
    return false;
  }

  private auxiliaryCall(agent: Agent): Line[] {
    const requestId = this.nextId('aux');
    const fields = { aux_task: 'title_generation', session_id: agent.session, api_request_id: requestId, provider: 'openrouter', model: 'google/gemini-3.5-flash', turn_id: '' };
    return [
      this.line(agent, 'pre_auxiliary_call', fields),
      this.line(agent, 'post_auxiliary_call', { ...fields, api_duration: 0.4 + this.random(), finish_reason: 'stop', usage: { input_tokens: 300, output_tokens: 12, prompt_tokens: 300 }, error: null }, 0.8),
    ];
  }

  private toolName(): string {
    // A fault run churns tool names so the cardinality guard folds some into "other".
    if (this.faults && this.random() < 0.05) return `generated_tool_${Math.floor(this.random() * 1000)}`;
    return this.pick(TOOLS);
  }

  private tools(agent: Agent, turnId: string): Line[] {
    const lines: Line[] = [];
    const count = Math.floor(this.random() * 4);
    for (let index = 0; index < count; index += 1) {
      const tool = this.toolName();
      const callId = this.nextId('toolu');
      const draw = this.random();
      const [, status, errorType] = TOOL_OUTCOMES.find(([threshold]) => draw < threshold) ?? TOOL_OUTCOMES[0]!;
      const duration = status === 'timeout' ? 420_000 : status === 'blocked' ? 0 : Math.floor(5 + this.random() * 4000);
      const fields = { tool_name: tool, tool_call_id: callId, turn_id: turnId, session_id: agent.session };
      lines.push(this.line(agent, 'pre_tool_call', fields));
      lines.push(this.line(agent, 'post_tool_call', { ...fields, duration_ms: duration, status, error_type: errorType }, duration / 1000));
    }
    return lines;
  }

  private approval(agent: Agent, turnId: string): Line[] {
    const surface = this.pick(['cli', 'gateway', 'smart'] as const);
    const fields = { surface, pattern_key: this.pick(['rm_rf', 'sudo', 'chmod_777', 'curl_pipe_sh']), session_key: `${agent.platform}:${agent.session}`, turn_id: turnId, tool_call_id: this.nextId('toolu') };
    const wait = surface === 'smart' ? 0.3 + this.random() : 1 + this.random() * 30;
    return [this.line(agent, 'pre_approval_request', fields), this.line(agent, 'post_approval_response', { ...fields, choice: this.pick(CHOICES[surface] ?? ['once']) }, wait)];
  }

  private subagent(agent: Agent, turnId: string): Line[] {
    const child = this.nextId('child');
    const role = this.random() < 0.8 ? 'leaf' : 'orchestrator';
    const duration = Math.floor(5000 + this.random() * 60000);
    const status = this.random() < 0.85 ? 'completed' : this.pick(['failed', 'interrupted', 'timeout']);
    return [
      this.line(agent, 'subagent_start', { parent_session_id: agent.session, parent_turn_id: turnId, child_session_id: child, child_role: role }),
      this.line(agent, 'subagent_stop', { parent_session_id: agent.session, parent_turn_id: turnId, child_session_id: child, child_role: role, child_status: status, duration_ms: duration }, duration / 1000),
    ];
  }

  private rotateSession(agent: Agent): Line[] {
    const old = agent.session;
    agent.session = this.nextId('s');
    agent.turn = 0;
    return [
      this.line(agent, 'on_session_finalize', { session_id: old, platform: agent.platform, reason: 'idle_expiry' }),
      this.line(agent, 'on_session_reset', { session_id: agent.session, platform: agent.platform, old_session_id: old, new_session_id: agent.session }),
    ];
  }

  /** Events of the envelope variant (agent runs, memory, turn_end, session_event), without seq. */
  envelopeRun(): Line[] {
    const session = this.nextId('env');
    return [
      { event: 'agent_start', data: { session_id: session, run_start_time_ms: Date.now() } },
      { event: 'session_event', data: { session_id: session, event: this.pick(['created', 'resumed', 'switched', 'reset']) } },
      { event: 'memory_write', data: { session_id: session, memory_provider: 'builtin', action: this.pick(['append', 'replace']), size_bytes: Math.floor(this.random() * 4096) } },
      { event: 'turn_end', data: { session_id: session, turn_id: this.nextId('et'), turn_duration_ms: Math.floor(1000 + this.random() * 30000) } },
      { event: 'agent_end', data: { session_id: session, run_duration_ms: Math.floor(2000 + this.random() * 60000), stop_reason: this.pick(['completed', 'max_iterations', 'interrupted']) } },
    ];
  }

  /** Each agent's heartbeat; fault runs report some callback drops. */
  heartbeats(): Line[] {
    return this.agents.map((agent) => {
      if (this.faults && this.random() < 0.5) {
        const hook = this.pick(['post_tool_call', 'post_api_request', 'pre_llm_call']);
        const reason = this.pick(['queue_full', 'send_failed']);
        const perHook = (agent.dropped[hook] ??= {});
        perHook[reason] = (perHook[reason] ?? 0) + 1 + Math.floor(this.random() * 3);
      }
      return { event: 'plugin_heartbeat', observed_at: this.clock, instance: agent.instance, data: { interval_seconds: 5, dropped: agent.dropped, queue_depth: 0, queue_capacity: 10000, plugin_version: 'traffic' } };
    });
  }

  /** About `count` lines of traffic: whole turns, round-robin over the agents. */
  batch(count: number): Line[] {
    const lines: Line[] = [];
    for (let agent = 0; lines.length < count; agent += 1) lines.push(...this.turn(agent));
    return lines;
  }
}

export interface SendOptions {
  readonly url: string;
  readonly token?: string;
  readonly model: TrafficModel;
  /** Lines per second (approximate). */
  readonly rate: number;
  readonly batchSize?: number;
  readonly signal: AbortSignal;
  /** Called per request with its lines; `resent` marks a deliberate duplicate of the previous batch. */
  readonly onResponse?: (status: number, lines: readonly Line[], resent: boolean) => void;
}

/** Posts generated batches at about `rate` lines per second until the signal aborts. */
export async function sendTraffic(options: SendOptions): Promise<void> {
  const batchSize = options.batchSize ?? 100;
  const interval = (batchSize / options.rate) * 1000;
  let lastHeartbeat = 0;
  let previous: Line[] = [];
  for (let batch = 0; !options.signal.aborted; batch += 1) {
    const lines = options.model.batch(batchSize);
    if (Date.now() - lastHeartbeat > 2000) {
      lines.push(...options.model.heartbeats());
      lastHeartbeat = Date.now();
    }
    if (options.model.faults && batch % 5 === 0) lines.push(...options.model.envelopeRun());
    await post(options, lines, false);
    // Every tenth batch of a fault run is sent twice, as a plugin does after a lost response.
    if (options.model.faults && batch % 10 === 9) await post(options, previous, true);
    previous = lines;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

async function post(options: SendOptions, lines: Line[], resent: boolean): Promise<void> {
  try {
    const response = await fetch(options.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-ndjson',
        ...(options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` }),
      },
      // Not aborted with the run: a request already sent finishes, so the caller's count of what
      // was answered stays exact.
      body: lines.map((line) => JSON.stringify(line)).join('\n'),
    });
    await response.arrayBuffer();
    options.onResponse?.(response.status, lines, resent);
  } catch {
    options.onResponse?.(0, lines, resent);
  }
}
