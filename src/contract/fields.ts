/**
 * Typed readers for untrusted event fields. A value of the wrong type counts as absent
 * (undefined): it never reaches a metric, and it never fails the event.
 */

export type Fields = Readonly<Record<string, unknown>>;

export function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(fields: Fields, key: string): string | undefined {
  const value = fields[key];
  return typeof value === 'string' ? value : undefined;
}

/** A non-empty string, for ids: Hermes sends "" when an id is unknown. */
export function id(fields: Fields, key: string): string | undefined {
  const value = str(fields, key);
  return value === undefined || value === '' ? undefined : value;
}

export function bool(fields: Fields, key: string): boolean | undefined {
  const value = fields[key];
  return typeof value === 'boolean' ? value : undefined;
}

/** A finite number that is zero or more: durations, counts, timestamps, token numbers. */
export function quantity(fields: Fields, key: string): number | undefined {
  const value = fields[key];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A whole number that is zero or more. */
export function count(fields: Fields, key: string): number | undefined {
  const value = quantity(fields, key);
  return value !== undefined && Number.isInteger(value) ? value : undefined;
}

export function record(fields: Fields, key: string): Fields | undefined {
  const value = fields[key];
  return isRecord(value) ? value : undefined;
}

/** Milliseconds field converted to seconds. */
export function millisAsSeconds(fields: Fields, key: string): number | undefined {
  const value = quantity(fields, key);
  return value === undefined ? undefined : value / 1000;
}
