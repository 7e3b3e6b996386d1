/** One line read on its own, as `{ok, event}` or `{ok, reason}`: what the shape tests assert on. */
import { BoundCheck } from '../../src/contract/bounds.js';
import type { ObserverEvent } from '../../src/contract/events.js';
import { readLine, type LineRejection } from '../../src/contract/shapes.js';

export type LineResult = { readonly ok: true; readonly event: ObserverEvent } | { readonly ok: false; readonly reason: LineRejection };

export function normalizeLine(line: unknown, arrivedAt: number): LineResult {
  const result = readLine(line, arrivedAt, new BoundCheck());
  return typeof result === 'string' ? { ok: false, reason: result } : { ok: true, event: result };
}
