/** All recorders, each built with the families it declares. */
import { mergeDeclarations } from '../../metrics/declare.js';
import type { Families } from '../../metrics/registry.js';
import { API_FAMILIES, ApiRecorder } from './api.js';
import { APPROVAL_FAMILIES, ApprovalRecorder } from './approvals.js';
import type { RecorderContext } from './context.js';
import { DELIVERY_FAMILIES, type DeliveryRecorder } from './delivery.js';
import { INTERRUPT_FAMILIES, InterruptRecorder } from './interrupts.js';
import { PLUGIN_REPORT_FAMILIES, PluginReportRecorder } from './plugins.js';
import { RUN_FAMILIES, RunRecorder } from './runs.js';
import { SESSION_FAMILIES, SessionRecorder } from './sessions.js';
import { SUBAGENT_FAMILIES, SubagentRecorder } from './subagents.js';
import { TOOL_FAMILIES, ToolRecorder } from './tools.js';
import { TURN_FAMILIES, TurnRecorder } from './turns.js';

/** The families the recorders write, each declared by its recorder. */
export const RECORDER_FAMILIES = mergeDeclarations(
  API_FAMILIES,
  TURN_FAMILIES,
  TOOL_FAMILIES,
  APPROVAL_FAMILIES,
  SESSION_FAMILIES,
  SUBAGENT_FAMILIES,
  INTERRUPT_FAMILIES,
  RUN_FAMILIES,
  DELIVERY_FAMILIES,
  PLUGIN_REPORT_FAMILIES,
);

export interface Recorders {
  readonly api: ApiRecorder;
  readonly turns: TurnRecorder;
  readonly tools: ToolRecorder;
  readonly approvals: ApprovalRecorder;
  readonly sessions: SessionRecorder;
  readonly subagents: SubagentRecorder;
  readonly runs: RunRecorder;
  readonly delivery: DeliveryRecorder;
  readonly interrupts: InterruptRecorder;
  readonly plugins: PluginReportRecorder;
}

export function createRecorders(
  context: RecorderContext,
  metrics: Families<typeof RECORDER_FAMILIES>,
  delivery: DeliveryRecorder,
): Recorders {
  return {
    api: new ApiRecorder(context, metrics),
    turns: new TurnRecorder(context, metrics),
    tools: new ToolRecorder(context, metrics),
    approvals: new ApprovalRecorder(context, metrics),
    sessions: new SessionRecorder(context, metrics),
    subagents: new SubagentRecorder(context, metrics),
    runs: new RunRecorder(context, metrics),
    delivery,
    interrupts: new InterruptRecorder(context, metrics),
    plugins: new PluginReportRecorder(context, metrics),
  };
}

export type { RecorderContext, Sweepable } from './context.js';
