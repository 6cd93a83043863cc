/** Errors as text, said once for the whole code base. */

/** What went wrong, for a log line or a reply that may show our own error's words: its message, or what was thrown. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
