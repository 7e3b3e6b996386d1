/** All recorders, built from one context. */
import { ApiRecorder } from './api.js';
import { ApprovalRecorder } from './approvals.js';
import type { RecorderContext } from './context.js';
import { DeliveryRecorder } from './delivery.js';
import { RunRecorder } from './runs.js';
import { SessionRecorder } from './sessions.js';
import { SubagentRecorder } from './subagents.js';
import { ToolRecorder } from './tools.js';
import { TurnRecorder } from './turns.js';

export interface Recorders {
  readonly api: ApiRecorder;
  readonly turns: TurnRecorder;
  readonly tools: ToolRecorder;
  readonly approvals: ApprovalRecorder;
  readonly sessions: SessionRecorder;
  readonly subagents: SubagentRecorder;
  readonly runs: RunRecorder;
  readonly delivery: DeliveryRecorder;
}

export function createRecorders(context: RecorderContext): Recorders {
  return {
    api: new ApiRecorder(context),
    turns: new TurnRecorder(context),
    tools: new ToolRecorder(context),
    approvals: new ApprovalRecorder(context),
    sessions: new SessionRecorder(context),
    subagents: new SubagentRecorder(context),
    runs: new RunRecorder(context),
    delivery: new DeliveryRecorder(context.metrics),
  };
}

export { SPAN_KINDS, type RecorderContext, type Sweepable } from './context.js';
