/**
 * What `npm run demo` prints about the Prometheus it starts: the overview queries (today's
 * metric and label names, checked against the catalogue by test/tools/demo.test.ts) and the
 * pages that answer on that Prometheus. Prometheus 3 serves its UI at `/graph` and `/alerts`;
 * a 2.x build without the React UI (Debian's 2.42) serves only the classic pages under
 * `/classic/`, so the version from `/api/v1/status/buildinfo` says which to try first and each
 * page is asked before it is printed.
 */

export const OVERVIEW_QUERIES: readonly string[] = [
  'sum by (provider, model) (rate(hermes_api_requests_total[1m]))',
  'provider:hermes_api_requests:error_ratio_rate5m',
  'histogram_quantile(0.95, sum by (le, provider) (rate(hermes_api_request_duration_seconds_bucket[1m])))',
  'sum by (token_type) (rate(hermes_tokens_total[1m]))',
  'sum by (tool, status) (rate(hermes_tool_calls_total[1m]))',
];

export interface PrometheusPages {
  /** The version Prometheus reports, or undefined when it did not answer. */
  readonly version: string | undefined;
  /** The overview graphs (every OVERVIEW_QUERIES expression, 15 minutes). */
  readonly graph: string;
  readonly alerts: string;
}

type Fetch = (url: string) => Promise<{ readonly status: number; json(): Promise<unknown> }>;

/** The major version in a buildinfo version string ("2.42.0+ds" → 2), or undefined. */
export function majorVersion(version: string | undefined): number | undefined {
  const major = /^v?(\d+)\./.exec(version ?? '')?.[1];
  return major === undefined ? undefined : Number(major);
}

/** The UI prefixes to try, most likely first, for a Prometheus of this version. */
export function uiPrefixes(version: string | undefined): readonly string[] {
  const major = majorVersion(version);
  if (major !== undefined && major >= 3) return ['', '/classic'];
  return ['/classic', ''];
}

export function graphQuery(queries: readonly string[]): string {
  return queries.map((query, index) => `g${index}.expr=${encodeURIComponent(query)}&g${index}.tab=0&g${index}.range_input=15m`).join('&');
}

async function buildVersion(url: string, get: Fetch): Promise<string | undefined> {
  try {
    const answer = await get(`${url}/api/v1/status/buildinfo`);
    if (answer.status !== 200) return undefined;
    const body = (await answer.json()) as { data?: { version?: unknown } };
    return typeof body.data?.version === 'string' ? body.data.version : undefined;
  } catch {
    return undefined;
  }
}

async function answers(url: string, get: Fetch): Promise<boolean> {
  try {
    return (await get(url)).status === 200;
  } catch {
    return false;
  }
}

/** The graph and alerts pages of the Prometheus at `url` that answer 200 (the first prefix that does). */
export async function prometheusPages(url: string, get: Fetch = fetch): Promise<PrometheusPages> {
  const version = await buildVersion(url, get);
  const prefixes = uiPrefixes(version);
  let prefix = prefixes[0] ?? '';
  for (const candidate of prefixes) {
    if (await answers(`${url}${candidate}/alerts`, get)) {
      prefix = candidate;
      break;
    }
  }
  return { version, graph: `${url}${prefix}/graph?${graphQuery(OVERVIEW_QUERIES)}`, alerts: `${url}${prefix}/alerts` };
}
