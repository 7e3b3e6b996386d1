/**
 * A heartbeat's cumulative host totals (callbacks dropped by hook and reason, values refused by
 * field) as the keys of one instance's tracker (sequence/tracker.ts), and the tracker's
 * increments back as labelled deltas. Hooks, reasons and fields are folded into closed sets
 * (known values, else `other`) before they become keys, so the keys stored per instance are
 * bounded by those sets; totals of reports that fold together are summed.
 */
import type { DropReport, RefusedReport } from '../contract/eventData.js';
import { VALUES, type ValueOf } from '../contract/vocabulary.js';

const DROP_HOOKS: ReadonlySet<string> = new Set(VALUES.plugin_hook);
const DROP_REASONS: ReadonlySet<string> = new Set(VALUES.plugin_drop_reason);
const REFUSED_FIELDS: ReadonlySet<string> = new Set(VALUES.refused_field);
const OTHER = 'other';

/** Keys start with their kind; NUL never occurs in a folded value, so it separates the parts. */
const DROPPED = 'd';
const REFUSED = 'r';
const SEPARATOR = '\u0000';

export interface DropDelta {
  readonly total: 'dropped';
  readonly hook: string;
  readonly reason: string;
  readonly delta: number;
}

export interface RefusedDelta {
  readonly total: 'refused';
  readonly field: string;
  readonly delta: number;
}

/** The rise of one host total since the instance's last heartbeat of the same boot. */
export type HostDelta = DropDelta | RefusedDelta;

/** The totals of one heartbeat by tracker key. */
export function foldTotals(dropped: readonly DropReport[], refused: readonly RefusedReport[]): Map<string, number> {
  const totals = new Map<string, number>();
  const add = (key: string, total: number) => totals.set(key, (totals.get(key) ?? 0) + total);
  for (const { hook, reason, total } of dropped) {
    add(`${DROPPED}${SEPARATOR}${DROP_HOOKS.has(hook) ? hook : OTHER}${SEPARATOR}${DROP_REASONS.has(reason) ? reason : OTHER}`, total);
  }
  for (const { field, total } of refused) add(`${REFUSED}${SEPARATOR}${REFUSED_FIELDS.has(field) ? field : OTHER}`, total);
  return totals;
}

/** How many drop reports foldTotals folds into `other`, by part (hook, reason). */
export function foldedDropParts(dropped: readonly DropReport[]): { readonly hook: number; readonly reason: number } {
  let hook = 0;
  let reason = 0;
  for (const report of dropped) {
    if (!DROP_HOOKS.has(report.hook)) hook += 1;
    if (!DROP_REASONS.has(report.reason)) reason += 1;
  }
  return { hook, reason };
}

/** A tracker increment of a key made by foldTotals, as a labelled delta. */
export function hostDelta(key: string, delta: number): HostDelta {
  const [kind, first = OTHER, second = OTHER] = key.split(SEPARATOR);
  return kind === REFUSED ? { total: 'refused', field: first, delta } : { total: 'dropped', hook: first, reason: second, delta };
}

/** A refused delta's field as its label value (folded by foldTotals, so known or `other`). */
export function refusedField(delta: RefusedDelta): ValueOf<'refused_field'> | typeof OTHER {
  return delta.field as ValueOf<'refused_field'> | typeof OTHER;
}
