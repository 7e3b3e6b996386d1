/** Shapes of Prometheus rule files, in the key order they are written. */

export type Severity = 'critical' | 'warning' | 'info';

export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
  /** Labels the rule adds to its result (the SLO rules' sloth_* labels). */
  readonly labels?: Readonly<Record<string, string>>;
  /** What the series measures; written as a YAML comment above the rule. */
  readonly comment: string;
}

export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  /** `severity` routes the alert; the SLO alerts add sloth's `sloth_severity` (page, ticket) and `sloth_service`. */
  readonly labels: { readonly severity: Severity; readonly sloth_severity?: 'page' | 'ticket'; readonly sloth_service?: string };
  readonly annotations: {
    readonly summary: string;
    readonly description: string;
    readonly runbook_url: string;
  };
}

export interface RuleGroup<Rule> {
  readonly name: string;
  /** Evaluation interval of the group; the global one when unset. */
  readonly interval?: string;
  readonly rules: readonly Rule[];
}
