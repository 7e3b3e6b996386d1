/**
 * Hermes passes api_request_error an `error={"type": <exception class>, "message": ...}` dict
 * (agent/api_request_hooks.py, _invoke_api_request_error_hook). The bridge plugin forwards only
 * the class, as `error_type`. Raw kwargs (flat lines, webhook deliveries) carry the dict: the
 * class is taken the same way, and the message is never read.
 */
import { record, str, type Fields } from './fields.js';

/** The plugin's pattern for exception classes (contract.json identifier_patterns.error_class). */
const ERROR_CLASS = /^[A-Za-z_][A-Za-z0-9_.]{0,63}$/;

export function withErrorClass(hook: string, fields: Fields): Fields {
  if (hook !== 'api_request_error' || fields.error_type !== undefined) return fields;
  const type = str(record(fields, 'error') ?? {}, 'type');
  return type !== undefined && ERROR_CLASS.test(type) ? { ...fields, error_type: type } : fields;
}
