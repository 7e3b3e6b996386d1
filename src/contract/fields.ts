/**
 * Typed readers for untrusted event fields. A value of the wrong type counts as absent
 * (undefined): it never reaches a metric, and it never fails the event.
 */

export type Fields = Readonly<Record<string, unknown>>;

// The value readers below take the value, not the object and a key: a reader that writes
// `fields.provider` gets a property load of its own, which sees one object shape per hook (JSON.parse
// gives every line of a hook the same one), where a shared `fields[key]` sees them all and is slow.

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A non-empty string, for ids: Hermes sends "" when an id is unknown. */
export function asId(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function asBool(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

/** A finite number that is zero or more: durations, counts, timestamps, token numbers. */
export function asQuantity(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A whole number that is zero or more. */
export function asCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

export function asRecord(value: unknown): Fields | undefined {
  return isRecord(value) ? value : undefined;
}

/** Milliseconds converted to seconds. */
export function asSecondsFromMillis(value: unknown): number | undefined {
  const millis = asQuantity(value);
  return millis === undefined ? undefined : millis / 1000;
}

export function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(fields: Fields, key: string): string | undefined {
  return asString(fields[key]);
}

export function record(fields: Fields, key: string): Fields | undefined {
  return asRecord(fields[key]);
}
