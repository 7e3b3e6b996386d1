/**
 * alertmanager.yml: routes the bundle's alerts by severity, groups them by incident and inhibits
 * the warnings an incident's page already covers.
 *
 * - critical → the paging receiver, warning → the ticket receiver, info → nobody (dashboards
 *   and the alerts list show it).
 * - Paging groups by (job, provider, tool): one provider outage is one page whether it hits one
 *   host or the whole fleet; hosts that join later re-notify at most once per group_interval.
 * - Inhibition: a critical suppresses the warnings of the same provider or tool on the same
 *   host (the static ratio alerts of an incident the SLO burn already pages), and a sidecar that
 *   is down or absent suppresses its host's (or job's) other alerts, which are blind then.
 *
 * The receivers are `build({ receivers })` options: Alertmanager receiver bodies (anything but
 * `name`, e.g. `{ pagerduty_configs: [...] }`). The defaults are webhook placeholders on an
 * address that never resolves (.invalid), so nothing is sent until they are replaced.
 */
import { stringify } from 'yaml';
import { GENERATED_NOTICE } from './render.js';

/** An Alertmanager receiver without its name: `webhook_configs`, `pagerduty_configs`, `email_configs`, ... */
export type ReceiverBody = Readonly<Record<string, unknown>>;

export interface Receivers {
  /** Gets every critical alert: the on-call rotation. */
  readonly paging: ReceiverBody;
  /** Gets every warning: a ticket queue worked in office hours. */
  readonly ticket: ReceiverBody;
}

export const RECEIVER_NAMES = { paging: 'hermes-paging', ticket: 'hermes-ticket', none: 'hermes-none' } as const;

export const defaultReceivers: Receivers = {
  paging: { webhook_configs: [{ url: 'https://paging.example.invalid/hermes', send_resolved: true }] },
  ticket: { webhook_configs: [{ url: 'https://tickets.example.invalid/hermes', send_resolved: false }] },
};

/** Timers of one route; docs/runbook.md ("Alertmanager") gives the reasons. */
export interface RouteTimers {
  readonly group_wait: string;
  readonly group_interval: string;
  readonly repeat_interval: string;
}

export const TIMERS: { readonly paging: RouteTimers; readonly ticket: RouteTimers } = {
  paging: { group_wait: '30s', group_interval: '5m', repeat_interval: '4h' },
  ticket: { group_wait: '5m', group_interval: '30m', repeat_interval: '24h' },
};

/** Labels that name an incident: the same provider or tool on the same job, whatever the alert. */
export const PAGE_GROUP_BY = ['job', 'provider', 'tool'] as const;
export const TICKET_GROUP_BY = ['alertname', 'job', 'provider', 'tool'] as const;

const SIDECAR_DOWN = 'HermesSidecarDown';
const SIDECAR_ABSENT = 'HermesSidecarAbsent';

function inhibitRules(): Record<string, unknown>[] {
  return [
    // A page for a provider (an SLO burn, hung calls) covers that provider's tickets on the host.
    {
      source_matchers: ['severity="critical"', 'provider=~".+"'],
      target_matchers: ['severity="warning"', 'provider=~".+"'],
      equal: ['job', 'instance', 'provider'],
    },
    {
      source_matchers: ['severity="critical"', 'tool=~".+"'],
      target_matchers: ['severity="warning"', 'tool=~".+"'],
      equal: ['job', 'instance', 'tool'],
    },
    // A sidecar that cannot be scraped makes its host's other alerts blind or stale.
    {
      source_matchers: [`alertname="${SIDECAR_DOWN}"`],
      target_matchers: [`alertname!="${SIDECAR_DOWN}"`],
      equal: ['job', 'instance'],
    },
    {
      source_matchers: [`alertname="${SIDECAR_ABSENT}"`],
      target_matchers: [`alertname!="${SIDECAR_ABSENT}"`],
      equal: ['job'],
    },
  ];
}

export function alertmanagerConfig(receivers: Receivers = defaultReceivers): Record<string, unknown> {
  return {
    route: {
      // info and anything not from this bundle's severities: nobody is notified.
      receiver: RECEIVER_NAMES.none,
      group_by: ['alertname', 'job'],
      routes: [
        { matchers: ['severity="critical"'], receiver: RECEIVER_NAMES.paging, group_by: [...PAGE_GROUP_BY], ...TIMERS.paging },
        { matchers: ['severity="warning"'], receiver: RECEIVER_NAMES.ticket, group_by: [...TICKET_GROUP_BY], ...TIMERS.ticket },
      ],
    },
    inhibit_rules: inhibitRules(),
    receivers: [
      { name: RECEIVER_NAMES.paging, ...receivers.paging },
      { name: RECEIVER_NAMES.ticket, ...receivers.ticket },
      { name: RECEIVER_NAMES.none },
    ],
  };
}

/** alertmanager.yml at the repository root, beside prometheus.yml. */
export function renderAlertmanagerConfig(receivers: Receivers = defaultReceivers): string {
  const header = [
    `# ${GENERATED_NOTICE}`,
    '#',
    '# Routes the Hermes alerts: critical pages, warning opens a ticket, info notifies nobody.',
    '# Replace the placeholder receivers (build({ receivers }) in monitoring/index.ts), then check with:',
    '#   amtool check-config alertmanager.yml',
    '# docs/runbook.md ("Alertmanager") explains the grouping, inhibition and timers.',
    '',
  ].join('\n');
  return `${header}${stringify(alertmanagerConfig(receivers), { lineWidth: 0, indentSeq: true })}`;
}
