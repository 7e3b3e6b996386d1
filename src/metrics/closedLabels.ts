/**
 * The run-time check of closed label values: a closed label takes the values its declaration
 * lists, `unknown` and `other`. The type-check refuses any other where a value is written; this
 * catches what reaches storage past it (a cast, a value read from the wire without closedLabel),
 * which storage then refuses, counted, and writes as `other`.
 */
import { OTHER, UNKNOWN } from '../wireText.js';

export class ClosedLabels {
  /** The values each closed label takes (by label index), undefined for open and info labels. */
  private readonly allowed: readonly (ReadonlySet<string> | undefined)[];

  /** `declared`: the declared values of each closed label by label index, undefined for the others. */
  constructor(declared: readonly (readonly string[] | undefined)[]) {
    this.allowed = declared.map((values) => (values === undefined ? undefined : new Set([...values, UNKNOWN, OTHER])));
  }

  /** Replaces each closed value of `values` (in label order) its declaration does not list with `other`; true when one was. */
  refuseUndeclared(values: string[]): boolean {
    let refused = false;
    this.allowed.forEach((allowed, index) => {
      if (allowed === undefined || allowed.has(values[index] as string)) return;
      values[index] = OTHER;
      refused = true;
    });
    return refused;
  }
}
