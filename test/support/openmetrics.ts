/**
 * A strict OpenMetrics parser from outside this project: Debian's python3-prometheus-client
 * (`prometheus_client.openmetrics.parser.text_string_to_metric_families`), run by /usr/bin/python3.
 * It rejects blank lines, a missing `# EOF`, units that are not a suffix of the name, counters
 * sampled without `_total`, unordered or non-cumulative buckets, exemplars over 128 characters
 * and exemplars anywhere but on buckets and counters.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import type { Tool } from './tools.js';

const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
try:
    families = [
        {"name": f.name, "type": f.type, "unit": f.unit, "samples": len(f.samples),
         "exemplars": [{"sample": s.name, "labels": s.exemplar.labels, "value": s.exemplar.value,
                        "timestamp": float(s.exemplar.timestamp)} for s in f.samples if s.exemplar]}
        for f in text_string_to_metric_families(sys.stdin.read())
    ]
    print(json.dumps({"ok": True, "families": families}))
except Exception as error:
    print(json.dumps({"ok": False, "error": str(error)}))
`;

export interface ParsedFamily {
  readonly name: string;
  readonly type: string;
  readonly unit: string;
  readonly samples: number;
  readonly exemplars: readonly { sample: string; labels: Record<string, string>; value: number; timestamp: number }[];
}

export type ParseResult = { readonly ok: true; readonly families: readonly ParsedFamily[] } | { readonly ok: false; readonly error: string };

export function openMetricsParser(): Tool {
  try {
    execFileSync(PYTHON, ['-c', 'import prometheus_client.openmetrics.parser'], { stdio: 'ignore' });
    return { path: PYTHON, skipReason: undefined };
  } catch {
    const hint = "install Debian's python3-prometheus-client";
    if (process.env.CI === 'true') throw new Error(`the OpenMetrics parser is required under CI (${hint})`);
    const skipReason = `SKIPPED: ${PYTHON} cannot import prometheus_client.openmetrics.parser (${hint})`;
    console.warn(skipReason);
    return { path: undefined, skipReason };
  }
}

export function parseOpenMetrics(text: string): ParseResult {
  const result = spawnSync(PYTHON, ['-c', SCRIPT], { input: text, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (result.status !== 0) return { ok: false, error: result.stderr };
  return JSON.parse(result.stdout) as ParseResult;
}
