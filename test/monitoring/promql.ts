/**
 * A deliberately small PromQL scanner for the monitoring tests: it finds the vector selectors
 * (metric name, label matchers, range) in an expression. It understands what our rules and
 * dashboards use (functions, aggregations with by/without, on/ignoring, strings, ranges,
 * Grafana variables); `promtool check rules` is the real parser and runs in promtool.test.ts.
 */

export interface VectorSelector {
  readonly name: string;
  /** Text between the braces, or '' when there are none. */
  readonly matchers: string;
  /** Text between the brackets of a range selector, if any. */
  readonly range: string | undefined;
}

const AGGREGATIONS = new Set([
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values',
  'bottomk', 'topk', 'quantile',
]);
/** Keywords followed by a parenthesised label list, which is not a selector. */
const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const OTHER_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);

const IDENTIFIER = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const NUMBER_OR_DURATION = /[0-9.]+[a-zA-Z]*/y;

function skipString(text: string, start: number): number {
  const quote = text[start];
  let index = start + 1;
  while (index < text.length && text[index] !== quote) {
    index += text[index] === '\\' ? 2 : 1;
  }
  return index + 1;
}

/** Index just past the bracket that closes the one at `start`, skipping strings. */
function skipBalanced(text: string, start: number, open: string, close: string): number {
  let depth = 0;
  let index = start;
  while (index < text.length) {
    const char = text[index];
    if (char === '"' || char === "'" || char === '`') {
      index = skipString(text, index);
      continue;
    }
    if (char === open) depth += 1;
    if (char === close) {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
    index += 1;
  }
  throw new Error(`unbalanced ${open}${close} in: ${text}`);
}

function skipSpaces(text: string, start: number): number {
  let index = start;
  while (index < text.length && /\s/.test(text[index] ?? '')) index += 1;
  return index;
}

function matchAt(pattern: RegExp, text: string, index: number): string | undefined {
  pattern.lastIndex = index;
  return pattern.exec(text)?.[0];
}

/** Reads `name{...}[...]` starting after the name; returns the selector and the next index. */
function readSelector(text: string, name: string, afterName: number): [VectorSelector, number] {
  let index = skipSpaces(text, afterName);
  let matchers = '';
  if (text[index] === '{') {
    const end = skipBalanced(text, index, '{', '}');
    matchers = text.slice(index + 1, end - 1);
    index = skipSpaces(text, end);
  }
  let range: string | undefined;
  if (text[index] === '[') {
    const end = skipBalanced(text, index, '[', ']');
    range = text.slice(index + 1, end - 1);
    index = end;
  }
  return [{ name, matchers, range }, index];
}

export function vectorSelectors(expr: string): VectorSelector[] {
  const found: VectorSelector[] = [];
  let index = 0;
  while (index < expr.length) {
    const char = expr[index] ?? '';
    if (char === '"' || char === "'" || char === '`') {
      index = skipString(expr, index);
      continue;
    }
    if (char === '$') {
      index = skipSpaces(expr, index + 1) + (matchAt(IDENTIFIER, expr, index + 1)?.length ?? 0);
      continue;
    }
    if (char === '{') throw new Error(`selector without a metric name in: ${expr}`);
    const number = /[0-9.]/.test(char) ? matchAt(NUMBER_OR_DURATION, expr, index) : undefined;
    if (number !== undefined) {
      index += number.length;
      continue;
    }
    const identifier = matchAt(IDENTIFIER, expr, index);
    if (identifier === undefined) {
      index += 1;
      continue;
    }
    const afterIdentifier = index + identifier.length;
    const next = skipSpaces(expr, afterIdentifier);
    if (LABEL_LIST_KEYWORDS.has(identifier)) {
      index = expr[next] === '(' ? skipBalanced(expr, next, '(', ')') : afterIdentifier;
    } else if (
      OTHER_KEYWORDS.has(identifier) ||
      AGGREGATIONS.has(identifier) ||
      expr[next] === '('
    ) {
      index = afterIdentifier;
    } else {
      const [selector, end] = readSelector(expr, identifier, afterIdentifier);
      found.push(selector);
      index = end;
    }
  }
  return found;
}

/** The selector inside a Grafana `label_values(selector, label)` variable query. */
export function labelValuesSelector(query: string): string {
  const match = /^label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$/.exec(query.trim());
  if (match?.[1] === undefined) throw new Error(`not a label_values(selector, label) query: ${query}`);
  return match[1];
}
