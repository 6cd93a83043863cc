/** The one place where an error becomes the text a user reads on the terminal. */
import { ConfigError } from "../config/errors.ts";

export function formatError(error: unknown): string {
  if (error instanceof ConfigError) return `fermix: ${error.message}`;
  const err = error as { code?: string; message?: string; port?: number; address?: string };
  if (err?.code === "EADDRINUSE") {
    return `fermix: cannot listen: the address is already in use (${err.message ?? "EADDRINUSE"}). Is another fermix running? Set PORT to use another port.`;
  }
  if (err?.code === "EACCES") return `fermix: permission denied: ${err.message ?? ""}`.trimEnd();
  return `fermix: ${err?.message ?? String(error)}`;
}
