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
  readonly grammar?: string;
  /** The Hermes release that first passes it; absent: 0.19. */
  readonly since?: string;
  readonly unit?: string;
  readonly meaning?: string;
  readonly from?: string;
  readonly transform?: string;
  readonly use?: string;
}

interface HookSpec {
  readonly register: string;
  readonly since?: string;
  readonly source: string;
  /** The metrics the hook feeds (docs/metrics.md says by which field). */
  readonly metrics?: readonly string[];
  readonly flush?: boolean;
  readonly fields: Readonly<Record<string, FieldSpec>>;
  readonly private?: Readonly<Record<string, FieldSpec>>;
  readonly added?: Readonly<Record<string, FieldSpec>>;
}

export interface ContractTable {
  readonly version: number;
  readonly hermes: { readonly repository: string; readonly tested_commits: Readonly<Record<string, string>>; readonly hook_list: string; readonly manifest_key: string };
  readonly hermes_versions: Readonly<Record<string, { readonly released: string; readonly commit: string; readonly read: string }>>;
  readonly identifier_patterns: Readonly<Record<string, string>>;
  readonly grammars: Readonly<Record<string, { readonly pattern: string; readonly meaning: string }>>;
  readonly usage_keys: readonly string[];
  readonly usage_flags: Readonly<Record<string, readonly string[]>>;
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
    const grammar = field.grammar === undefined ? '' : ` (grammar \`${field.grammar}\`)`;
    const since = field.since === undefined ? '' : ` (Hermes ${field.since})`;
    return `| \`${name}\` | ${kind} | ${field.type} | ${cell(field.unit)} | ${cell(origin + (field.meaning ?? field.use ?? ''))}${transform}${grammar}${since} |`;
  });
}

const OLDEST = '0.19';
const code = (names: readonly string[]): string => (names.length === 0 ? '' : names.map((name) => `\`${name}\``).join(', '));

/** Whether a hook or field exists in a release: it does from its `since` on (versions compare as numbers). */
function existsIn(since: string | undefined, version: string): boolean {
  const [major = 0, minor = 0] = (since ?? OLDEST).split('.').map(Number);
  const [vMajor = 0, vMinor = 0] = version.split('.').map(Number);
  return vMajor > major || (vMajor === major && vMinor >= minor);
}

/**
 * Per Hermes release the plugin was checked against: which hooks it calls, which of their fields
 * exist, and the metrics each hook feeds. A field marked with a later patch release (0.21.x main)
 * counts as that minor release's, and its row says so.
 */
function compatibilityTable(table: ContractTable): string[] {
  const versions = Object.keys(table.hermes_versions);
  const header = versions.map((version) => {
    const { released, commit } = table.hermes_versions[version] ?? { released: '', commit: '' };
    return `Hermes ${version} (${released}, \`${commit.slice(0, 8)}\`)`;
  });
  const rows = Object.entries(table.hooks).map(([name, hook]) => {
    const fields = Object.entries(hook.fields);
    const cells = versions.map((version) => {
      if (!existsIn(hook.since, version)) return 'not called';
      const present = fields.filter(([, field]) => existsIn(field.since, version) && field.since !== undefined && field.since.split('.').length < 3);
      const later = fields.filter(([, field]) => field.since !== undefined && field.since.split('.').length >= 3 && existsIn(field.since, version));
      const added = present.filter(([, field]) => field.since === version).map(([field]) => field);
      const parts = ['called'];
      if (added.length > 0) parts.push(`adds ${code(added)}`);
      if (later.length > 0) parts.push(`${code(later.map(([field]) => field))} from ${later.map(([, field]) => field.since).join(', ')}`);
      return parts.join('; ');
    });
    const older = fields.filter(([, field]) => field.since === undefined).map(([field]) => field);
    return `| \`${name}\` | ${cells.join(' | ')} | ${code(older)} | ${code(hook.metrics ?? [])} |`;
  });
  return [
    '## Compatibility: Hermes releases',
    '',
    'Per release checked, whether Hermes calls each hook and which fields it adds there; the',
    'fields column lists what the hook passes from the first release that calls it. Generated from',
    'the `since` marks of contract.json. A field or hook Hermes does not pass',
    'is simply absent: the metric it feeds shows `unknown` or no series (docs/metrics.md, "fed by").',
    '',
    ...versions.map((version) => `- Hermes ${version}: ${cell(table.hermes_versions[version]?.read)}.`),
    '',
    `| hook | ${header.join(' | ')} | fields from the first release that calls it | metrics |`,
    `|---|${versions.map(() => '---').join('|')}|---|---|`,
    ...rows,
    '',
  ];
}

function hookSection(name: string, hook: HookSpec): string[] {
  return [
    `### \`${name}\``,
    '',
    `Registered: ${hook.register}${hook.flush === true ? '; the plugin flushes its queue after it' : ''}${hook.since === undefined ? '' : `; Hermes ${hook.since} and later`}. Hermes call site: ${hook.source}.`,
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
  '  `400` (not JSON/NDJSON), `401` (token), `405` with `Allow: POST` (any other method), `413` (too',
  '  large or too many lines), `415` (media type or encoding), `429` and `503` with `Retry-After`',
  '  (queue full, memory limit, shutting down: retry the same batch), `500`. Errors and their codes',
  '  live in src/errors.ts.',
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
  '## Compact encoding',
  '',
  'The bridge plugin can send a batch as one compact body instead of NDJSON lines: the field names',
  'once per body, each event a positional row. It costs the sender thread, which shares the GIL with',
  'Hermes, about half of what building and encoding a JSON object per event costs (bench/optimizations.md,',
  'issue 32). The sidecar decodes each row into the plugin line it stands for and reads that line like',
  'any other: same readers, same bounds, same per-line rejections (src/contract/compact.ts).',
  '',
  '- Negotiation: every answer of `POST /v1/events` carries `Accept-Post: application/x-ndjson,',
  '  application/json, application/x-hermes-events-compact+json`. The plugin starts with NDJSON and',
  '  sends compact bodies once an answer names the compact type. A sidecar without it (an older',
  '  release) never advertises it and answers the type `415` before reading the body; a plugin that',
  '  meets a `415` to a compact body (a sidecar replaced by an older one) re-sends the same batch as',
  '  NDJSON at once, stays with NDJSON until an answer advertises compact bodies again, and counts',
  '  `compact_refused` in its heartbeat\'s `plugin_errors`; a `413` to a compact body (over',
  '  `--ingest.max-json-bytes`) sends that batch as NDJSON (`compact_too_large`). An older plugin',
  '  ignores the header and sends NDJSON, which every sidecar reads. `HERMES_SIDECAR_COMPACT=0` keeps',
  '  a plugin on NDJSON.',
  '- The body (`Content-Type: application/x-hermes-events-compact+json`, gzip allowed): `{"v": 1,',
  '  "instance": <plugin instance id>, "schema": {"events": [[<event>, <field>, ...], ...], "usage":',
  '  [<usage key>, ...], "usage_flags": [<usage key>, ...], "micros": [<field>, ...]}, "seq": <seq',
  '  of the first row>, "heartbeat": <plugin_heartbeat line, optional>, "events": [[<code>,',
  '  <observed_at in integer microseconds>, <value>, ...], ...]}`. `code` indexes `schema.events`; the',
  '  values follow that entry\'s field names, `null` or a missing trailing value is an absent field;',
  '  row *i* has seq `seq + i`. `usage` is a list in `schema.usage` order, optionally followed by a',
  '  list of `reported_usage_fields` flags in `schema.usage_flags` order. A number under a field',
  '  `schema.micros` names is integer microseconds: the plugin sends every number field in seconds',
  '  (unit `seconds` or `epoch seconds`) as the nearest integer microsecond, which the JSON encoder',
  '  writes in a fraction of the time of a float\'s shortest form (a time taken with `time.time()` has',
  '  no finer resolution), and refuses a magnitude of 10^15 seconds or more (`values_refused`); the',
  '  sidecar divides it back. The heartbeat is applied before the',
  '  rows. The plugin writes the schema from contract.json (hooks, then envelope events: the two',
  '  `post_api_request` shapes are two codes), so a sidecar reads a plugin with a newer contract by',
  '  name, never by position.',
  '- Bounds: the body is one JSON document, bounded by `--ingest.max-json-bytes` before it is parsed',
  '  and by `--ingest.max-events-per-request` (rows and heartbeat) after; strings are bounded in',
  '  bytes as in any line. A row that does not fit its schema entry is rejected alone',
  '  (`invalid_event`, by index: the heartbeat is index 0 when present). A malformed frame or schema',
  '  (no instance, a seq that is not a safe integer, a field name that is not a lower-case identifier',
  '  or appears twice, more than 256 schema entries or 64 fields in one) refuses the body with `400',
  '  invalid_compact_body`; a version other than 1 with `415 unsupported_compact_version`, so a newer',
  '  plugin falls back to NDJSON. Both count in `hermes_sidecar_events_rejected_total`.',
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
    `Hermes: ${table.hermes.repository}, tested at ${Object.entries(table.hermes.tested_commits).map(([version, commit]) => `${version} \`${commit}\``).join(' and ')}. Hook list: ${table.hermes.hook_list}.`,
    `Plugin manifest key: ${table.hermes.manifest_key}.`,
    '',
    ...WIRE_FORMAT,
    '## Boundary grammar',
    '',
    'Every string field the plugin forwards is an id or an identifier-like value, and declares its',
    'grammar below. The plugin\'s sender thread forwards a string only when the whole of it matches',
    '(precompiled patterns, with a length check first); anything else is kept inside Hermes and',
    'counted by field in the heartbeat (`refused_fields`, shown as',
    '`hermes_plugin_values_refused_total{field}`). An empty string is absent (Hermes passes `""` for',
    'an unknown id). A string in a field of another type is refused the same way.',
    '',
    '| grammar | pattern | meaning |',
    '|---|---|---|',
    ...Object.entries(table.grammars).map(([name, grammar]) => `| \`${name}\` | \`${cell(grammar.pattern)}\` | ${cell(grammar.meaning)} |`),
    '',
    '## Identifier patterns',
    '',
    'Strings from Hermes that transforms reduce to a code identifier are forwarded only when they match',
    '(`exit_reason` keeps the leading identifier of `turn_exit_reason`, group 1; what follows it, such',
    'as error text in parentheses, never leaves Hermes):',
    '',
    '| transform | pattern |',
    '|---|---|',
    ...Object.entries(table.identifier_patterns).map(([name, pattern]) => `| \`${name}\` | \`${cell(pattern)}\` |`),
    '',
    `\`usage\` objects carry only these numeric keys (tokens): ${table.usage_keys.map((key) => `\`${key}\``).join(', ')};`,
    ...Object.entries(table.usage_flags).map(
      ([flag, keys]) => `and \`${flag}\` (Hermes 0.21), a boolean per key of ${code(keys)}: false means the provider did not report that count.`,
    ),
    '',
    ...compatibilityTable(table),
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
