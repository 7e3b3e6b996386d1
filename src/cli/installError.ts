/** A refusal of install-plugin, with a message for the user; anything else escaping is a bug. */
export class InstallError extends Error {}

/** The `code` of a Node.js system error (ENOENT, EISDIR, ...), if any. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}
