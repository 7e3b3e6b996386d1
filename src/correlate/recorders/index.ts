/** All recorders, each built with the metrics it owns. */
import { metricsOwnedBy, type Metrics } from '../../metrics/registry.js';
import { ApiRecorder } from './api.js';
import { ApprovalRecorder } from './approvals.js';
import type { Collectable, RecorderContext } from './context.js';
import { DeliveryRecorder, type Liveness } from './delivery.js';
import { InterruptRecorder } from './interrupts.js';
import { PluginReportRecorder } from './plugins.js';
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
  readonly interrupts: InterruptRecorder;
  readonly plugins: PluginReportRecorder;
}

/** Bounds of the per-plugin-instance state kept outside the sequence table. */
export interface PluginLimits {
  readonly maxInstances: number;
}

export function createRecorders(context: RecorderContext, metrics: Metrics, liveness: Liveness, plugins: PluginLimits): Recorders {
  return {
    api: new ApiRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/api')),
    turns: new TurnRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/turns')),
    tools: new ToolRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/tools')),
    approvals: new ApprovalRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/approvals')),
    sessions: new SessionRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/sessions')),
    subagents: new SubagentRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/subagents')),
    runs: new RunRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/runs')),
    delivery: new DeliveryRecorder(metricsOwnedBy(metrics, 'correlate/recorders/delivery'), liveness),
    interrupts: new InterruptRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/interrupts')),
    plugins: new PluginReportRecorder(context, metricsOwnedBy(metrics, 'correlate/recorders/plugins'), plugins.maxInstances),
  };
}

/** The recorders whose gauges are computed at scrape time. */
export function collectables(recorders: Recorders): Collectable[] {
  const { api, tools, approvals, sessions, subagents, delivery, plugins } = recorders;
  return [api, tools, approvals, sessions, subagents, delivery, plugins];
}

export type { Collectable, RecorderContext, Sweepable } from './context.js';
