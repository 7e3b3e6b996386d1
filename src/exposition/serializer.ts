/**
 * The serializer: family views (src/metrics/families.ts) in, exposition text out, in the
 * Prometheus text format 0.0.4 or OpenMetrics 1.0. Pure with respect to its input (the same
 * families give the same text, tested against golden files in test/exposition/); the only state
 * is a cache of each series' rendered lines, valid while the series' version has not moved, so a
 * scrape re-renders only the series written since the previous one. One rendering is cached per
 * series: the two formats write the same lines for most series (gauges, counters named `_total`,
 * histograms without exemplars), and where they differ the cache holds the format rendered last.
 *
 * OpenMetrics differences handled here: counters are declared without their `_total` suffix and
 * sampled with it; `# UNIT` is written when the unit is a suffix of the name; help text also
 * escapes double quotes; histogram buckets carry their newest exemplar; the output ends in `# EOF`.
 */
import type { Exemplar, FamilyView, HistogramSeries, ScalarSeries } from '../metrics/registry.js';

export type Format = 'text' | 'openmetrics';

/** Units Prometheus names end with (base units); written as `# UNIT` in OpenMetrics. */
const UNITS = ['seconds', 'bytes'] as const;

interface SeriesCache {
  /** `a="x",b="y"` (no braces), escaped once. */
  readonly labels: string;
  /** The version the rendered text is of. */
  version: number;
  /** The format it was rendered in, or `both` when the two formats write the same lines. */
  format: Format | 'both';
  text: string;
}

const formatIndex = (format: Format): 0 | 1 => (format === 'text' ? 0 : 1);

/**
 * Whether both formats write the same lines for a series: they differ only in the sample name of
 * a counter not named `_total` (OpenMetrics adds it) and in the exemplars of histogram buckets
 * (OpenMetrics only).
 */
function sameInBothFormats(family: FamilyView, series: ScalarSeries | HistogramSeries): boolean {
  if (family.bounds !== undefined) return (series as HistogramSeries).exemplars === undefined;
  return family.type !== 'counter' || family.name.endsWith('_total');
}

/** Escaping of a label value (both formats): backslash, double quote and newline. */
export function escapeLabelValue(value: string): string {
  if (!/[\\"\n]/.test(value)) return value;
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

/** Help text: backslash and newline; OpenMetrics also escapes double quotes. */
function escapeHelp(help: string, format: Format): string {
  const escaped = help.replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
  return format === 'openmetrics' ? escaped.replaceAll('"', '\\"') : escaped;
}

/** A sample value in either format. */
export function formatValue(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

/** The name a family is declared under: OpenMetrics counters drop their `_total`. */
export function familyName(family: FamilyView, format: Format): string {
  if (format === 'openmetrics' && family.type === 'counter' && family.name.endsWith('_total')) {
    return family.name.slice(0, -'_total'.length);
  }
  return family.name;
}

/** The unit a family's name ends with, if it is one of the base units. */
export function unitOf(name: string): string | undefined {
  return UNITS.find((unit) => name.endsWith(`_${unit}`));
}

function header(family: FamilyView, format: Format): string {
  const name = familyName(family, format);
  let text = `# HELP ${name} ${escapeHelp(family.help, format)}\n# TYPE ${name} ${family.type}\n`;
  const unit = format === 'openmetrics' ? unitOf(name) : undefined;
  if (unit !== undefined) text += `# UNIT ${name} ${unit}\n`;
  return text;
}

function labelText(names: readonly string[], values: readonly string[]): string {
  let text = '';
  for (let index = 0; index < names.length; index += 1) {
    text += `${index === 0 ? '' : ','}${names[index] ?? ''}="${escapeLabelValue(values[index] ?? '')}"`;
  }
  return text;
}

function exemplarText(exemplar: Exemplar): string {
  const labels = Object.entries(exemplar.labels)
    .map(([name, value]) => `${name}="${escapeLabelValue(value)}"`)
    .join(',');
  return ` # {${labels}} ${formatValue(exemplar.value)} ${formatValue(exemplar.timestamp)}`;
}

/**
 * Renders families; keep one per listener so its cache serves every scrape.
 *
 * Series text is built with Array.join, which yields a flat string: text built with `+=` is a
 * rope that every later join or socket write walks again, which made joining a scrape served
 * from the cache cost ten times the scrape itself (tools/scrape-timing.ts).
 */
export class Serializer {
  private readonly cache = new WeakMap<object, SeriesCache>();
  private readonly headers = new WeakMap<FamilyView, [string | undefined, string | undefined]>();
  private readonly boundTexts = new WeakMap<readonly number[], readonly string[]>();

  /**
   * The exposition of `families` as parts whose concatenation is the whole text: one per family
   * header and one per series (so a writer can send them in chunks without one joined string).
   */
  serialize(families: readonly FamilyView[], format: Format): string[] {
    const parts: string[] = [];
    for (const family of families) this.serializeFamily(family, format, parts);
    if (format === 'openmetrics') parts.push('# EOF\n');
    return parts;
  }

  private serializeFamily(family: FamilyView, format: Format, parts: string[]): void {
    parts.push(this.headerOf(family, format));
    const name = familyName(family, format);
    const bounds = family.bounds === undefined ? undefined : this.boundsOf(family.bounds);
    for (const series of family.series()) {
      const cached = family.stable ? this.cache.get(series) : undefined;
      if (cached !== undefined && cached.version === series.version && (cached.format === 'both' || cached.format === format)) {
        parts.push(cached.text);
        continue;
      }
      const labels = cached?.labels ?? labelText(family.labelNames, series.labelValues);
      const text =
        bounds === undefined
          ? this.scalar(name, family.type, format, labels, series as ScalarSeries)
          : this.histogram(name, format, labels, bounds, series as HistogramSeries);
      parts.push(text);
      if (!family.stable) continue;
      const rendered: Format | 'both' = sameInBothFormats(family, series) ? 'both' : format;
      if (cached === undefined) {
        this.cache.set(series, { labels, version: series.version, format: rendered, text });
        continue;
      }
      cached.version = series.version;
      cached.format = rendered;
      cached.text = text;
    }
  }

  private headerOf(family: FamilyView, format: Format): string {
    let entry = this.headers.get(family);
    if (entry === undefined) {
      entry = [undefined, undefined];
      if (family.stable) this.headers.set(family, entry);
    }
    const index = formatIndex(format);
    return (entry[index] ??= header(family, format));
  }

  private boundsOf(bounds: readonly number[]): readonly string[] {
    let texts = this.boundTexts.get(bounds);
    if (texts === undefined) {
      texts = [...bounds.map(formatValue), '+Inf'];
      this.boundTexts.set(bounds, texts);
    }
    return texts;
  }

  private scalar(name: string, type: FamilyView['type'], format: Format, labels: string, series: ScalarSeries): string {
    const sample = format === 'openmetrics' && type === 'counter' ? `${name}_total` : name;
    const value = formatValue(series.value);
    return labels === '' ? [sample, ' ', value, '\n'].join('') : [sample, '{', labels, '} ', value, '\n'].join('');
  }

  private histogram(name: string, format: Format, labels: string, bounds: readonly string[], series: HistogramSeries): string {
    const withExemplars = format === 'openmetrics' ? series.exemplars : undefined;
    const rest = labels === '' ? '} ' : `,${labels}} `;
    // One template per line, joined once: half the time of pushing every piece separately.
    const lines: string[] = [];
    let cumulative = 0;
    for (let index = 0; index < bounds.length; index += 1) {
      cumulative += series.buckets[index] ?? 0;
      const exemplar = withExemplars?.[index];
      const tail = exemplar === undefined ? '\n' : `${exemplarText(exemplar)}\n`;
      lines.push(`${name}_bucket{le="${bounds[index] ?? '+Inf'}"${rest}${cumulative}${tail}`);
    }
    const braces = labels === '' ? ' ' : `{${labels}} `;
    lines.push(`${name}_sum${braces}${formatValue(series.sum)}\n${name}_count${braces}${series.count}\n`);
    return lines.join('');
  }
}
