/**
 * Generates docs/contract.md from plugin/hermes_prometheus_bridge/contract.json, the one table
 * the plugin derives its allow-lists from and test/contract/agreement.test.ts checks the
 * sidecar's readers against; a test checks the committed file is current.
 * Run: npm run docs:contract
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_STRING_LIMITS } from '../src/contract/bounds.js';

interface FieldSpec {
  readonly type: string;
  readonly unit?: string;
  readonly meaning?: string;
  readonly from?: string;
  readonly transform?: string;
  readonly use?: string;
}

interface HookSpec {
  readonly register: string;
  readonly source: string;
  readonly flush?: boolean;
  readonly fields: Readonly<Record<string, FieldSpec>>;
  readonly private?: Readonly<Record<string, FieldSpec>>;
  readonly added?: Readonly<Record<string, FieldSpec>>;
}

export interface ContractTable {
  readonly version: number;
  readonly hermes: { readonly repository: string; readonly tested_commit: string; readonly hook_list: string; readonly manifest_key: string };
  readonly identifier_patterns: Readonly<Record<string, string>>;
  readonly usage_keys: readonly string[];
  readonly hooks: Readonly<Record<string, HookSpec>>;
  readonly observer: Readonly<Record<string, HookSpec>>;
  readonly heartbeat: { readonly event: string; readonly fields: Readonly<Record<string, FieldSpec>> };
}

const TABLE_URL = new URL('../plugin/hermes_prometheus_bridge/contract.json', import.meta.url);

export function readContractTable(): ContractTable {
  return JSON.parse(readFileSync(TABLE_URL, 'utf8')) as ContractTable;
}

const cell = (text: string | undefined): string => (text ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ');

function fieldRows(fields: Readonly<Record<string, FieldSpec>>, kind: string): string[] {
  return Object.entries(fields).map(([name, field]) => {
    const origin = field.from === undefined ? '' : `from \`${field.from}\`; `;
    const transform = field.transform === undefined ? '' : ` (transform \`${field.transform}\`)`;
    return `| \`${name}\` | ${kind} | ${field.type} | ${cell(field.unit)} | ${cell(origin + (field.meaning ?? field.use ?? ''))}${transform} |`;
  });
}

function hookSection(name: string, hook: HookSpec): string[] {
  return [
    `### \`${name}\``,
    '',
    `Registered: ${hook.register}${hook.flush === true ? '; the plugin flushes its queue after it' : ''}. Hermes call site: ${hook.source}.`,
    '',
    '| field | kind | type | unit | meaning |',
    '|---|---|---|---|---|',
    ...fieldRows(hook.fields, 'forwarded'),
    ...fieldRows(hook.added ?? {}, 'added by the plugin'),
    ...fieldRows(hook.private ?? {}, 'private (never sent)'),
    '',
  ];
}

const WIRE_FORMAT = [
  '## Wire format',
  '',
  'The bridge plugin runs inside Hermes. Each registered hook callback copies the allow-listed',
  'fields below into a bounded queue and returns; a sender thread ships batches to the sidecar:',
  '',
  '- `POST /v1/events` on the ingest listener (default `127.0.0.1:9479`), `Content-Type:',
  '  application/x-ndjson` (one JSON object per line; `application/json` with one object or an array',
  '  is accepted too), optionally `Content-Encoding: gzip`, `Authorization: Bearer <token>` when the',
  '  sidecar requires a token. Size limits count after decompression.',
  '- A plugin line: `{"event": <hook>, "observed_at": <epoch seconds>, "instance": <plugin instance',
  '  id>, "seq": <per-instance sequence number>, "data": {<fields>}}`. `instance`/`seq` let the',
  '  sidecar drop duplicates of retried batches and count gaps as lost events. Two other shapes are',
  '  accepted and normalized into the same event: the envelope `{"event", "data"}` and flat kwargs',
  '  `{"event" | "hook": <name>, ...fields}`.',
  '- Answers: `202 {"accepted", "rejected", "errors"}` (a bad line is rejected and counted alone);',
  '  `400` (not JSON/NDJSON), `401` (token), `413` (too large or too many lines), `415` (media type or',
  '  encoding), `429` and `503` with `Retry-After` (queue full, memory limit, shutting down: retry the',
  '  same batch), `500`. Errors and their codes live in src/errors.ts.',
  '- `POST /v1/hooks`: Hermes outbound webhooks (agent/shell_hooks.py `_serialize_payload`:',
  '  `{hook_event_name, tool_name, tool_input, session_id, cwd, extra: {<other kwargs>}, delivery_id,',
  '  timestamp}`), signed with `X-Hermes-Signature-256: sha256=<hex HMAC of the body>`; the fields',
  '  are read from `extra` by the same readers. `tool_input`, `cwd` and `profile` are never read.',
  '- Raw Hermes kwargs (flat lines, webhook deliveries) carry `api_request_error`\'s `error` dict: the',
  '  sidecar takes its `type` as `error_type` when it matches `error_class` below, as the plugin does',
  '  (src/contract/errorClass.ts); the message is never read.',
  '',
  'Nothing else leaves Hermes: no prompt, message, command, argument, result, path, goal or error',
  'text. Strings that become labels are bounded by the sidecar\'s label guard; ids never become',
  'labels. A value of the wrong type is read as absent.',
  '',
  'Every string is bounded in UTF-8 bytes as it is read, before the sidecar stores or hashes it:',
  'ids (session, turn, request, tool call, subagent session, approval session key, webhook',
  `delivery) to \`--ingest.max-id-bytes\` (${DEFAULT_STRING_LIMITS.maxIdBytes}), names that become labels to`,
  `\`--ingest.max-label-value-bytes\` (${DEFAULT_STRING_LIMITS.maxLabelValueBytes}). A longer one is read as absent and counted in`,
  '`hermes_sidecar_values_rejected_total{field}` under its wire name; a plugin `instance` past the',
  'id limit rejects its line. Real Hermes ids are tens of bytes.',
  '',
];

export function renderContractDoc(table: ContractTable = readContractTable()): string {
  const lines = [
    '# Contract: Hermes hooks → bridge plugin → sidecar',
    '',
    '<!-- Generated from plugin/hermes_prometheus_bridge/contract.json by `npm run docs:contract`; do not edit by hand. -->',
    '',
    'One table, plugin/hermes_prometheus_bridge/contract.json, says which keyword arguments of which',
    'Hermes hook leave the Hermes process and under which name. The plugin derives its allow-lists from',
    'it; test/contract/agreement.test.ts fails when the sidecar\'s field readers (src/contract/events.ts)',
    'read a field the table does not forward, or the table forwards a field no reader uses.',
    'docs/metrics.md says which metric each field feeds.',
    '',
    `Hermes: ${table.hermes.repository}, tested at commit \`${table.hermes.tested_commit}\`. Hook list: ${table.hermes.hook_list}.`,
    `Plugin manifest key: ${table.hermes.manifest_key}.`,
    '',
    ...WIRE_FORMAT,
    '## Identifier patterns',
    '',
    'Strings from Hermes that are code identifiers (not content) are forwarded only when they match:',
    '',
    '| transform | pattern |',
    '|---|---|',
    ...Object.entries(table.identifier_patterns).map(([name, pattern]) => `| \`${name}\` | \`${cell(pattern)}\` |`),
    '',
    `\`usage\` objects carry only these numeric keys (tokens): ${table.usage_keys.map((key) => `\`${key}\``).join(', ')}.`,
    '',
    '## Hooks (`ctx.register_hook`, keyword arguments)',
    '',
    ...Object.entries(table.hooks).flatMap(([name, hook]) => hookSection(name, hook)),
    '## Envelope variant (`register_observer_hook`)',
    '',
    'No Hermes release has `register_observer_hook`; the plugin uses it only when a host offers it.',
    'Metrics only these events feed are marked **envelope** in docs/metrics.md.',
    '',
    ...Object.entries(table.observer).flatMap(([name, hook]) => hookSection(name, hook)),
    `## The plugin's heartbeat (\`${table.heartbeat.event}\`)`,
    '',
    '| field | kind | type | unit | meaning |',
    '|---|---|---|---|---|',
    ...fieldRows(table.heartbeat.fields, 'sent'),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL('../docs/contract.md', import.meta.url), renderContractDoc());
}
