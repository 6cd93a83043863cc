/**
 * Writing a file so a reader sees the old content or the new, never half:
 * a temp file beside it (owner-only), then a rename. Its folder is created
 * owner-only when missing.
 */
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** `mode` is the file's (default 0600: owner-only); a script is 0700. */
export function writeFileAtomically(path: string, bytes: Uint8Array | string, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, bytes, { mode });
    chmodSync(temp, mode);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
