/**
 * Where signal-cli is on this machine and where it keeps what it received:
 * the executable that `cli_path` (or SIGNAL_CLI_PATH) names, looked up on
 * PATH when it is a bare name, and signal-cli's attachment store. Both the
 * adapter (before each start of the child) and `fermix doctor` ask here, so
 * they give the same verdict in the same words.
 */
import { accessSync, constants, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export type Env = Record<string, string | undefined>;

export type CliLookup = { ok: true; path: string } | { ok: false; reason: string };

const FIX = "install signal-cli (https://github.com/AsamK/signal-cli), or set cli_path in [fermix_channels.signal] / SIGNAL_CLI_PATH to its full path";

/** The signal-cli executable to run, or why there is none a person can act on. Never throws. */
export function findSignalCli(cliPath: string, env: Env): CliLookup {
  if (!cliPath.includes("/")) {
    const found = Bun.which(cliPath, { PATH: env.PATH ?? "" });
    return found ? { ok: true, path: found } : { ok: false, reason: `signal-cli not found: no "${cliPath}" on PATH; ${FIX}` };
  }
  const path = resolve(cliPath);
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return { ok: false, reason: `signal-cli not found: ${path} does not exist; ${FIX}` };
  }
  if (!isFile) return { ok: false, reason: `signal-cli not found: ${path} is not a file; ${FIX}` };
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return { ok: false, reason: `signal-cli at ${path} is not executable: run chmod +x on it, or point cli_path / SIGNAL_CLI_PATH at the right file` };
  }
  return { ok: true, path };
}

/**
 * signal-cli's attachment store: `attachments_dir` when set, else
 * `$XDG_DATA_HOME/signal-cli/attachments` (`~/.local/share/…` without
 * XDG_DATA_HOME), where `signal-cli jsonRpc` writes each received file under
 * its attachment id.
 */
export function signalAttachmentsDir(configured: string | undefined, env: Env): string {
  if (configured) return resolve(configured);
  const dataHome = env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
  return join(dataHome, "signal-cli", "attachments");
}

/**
 * Whether an attachment id from signal-cli is a plain file name in its store.
 * signal-cli writes ids made of [A-Za-z0-9_.-] only; anything else (a path
 * separator, "..") is refused, so an envelope can never name a file elsewhere.
 */
export function isAttachmentId(id: string): boolean {
  return /^[A-Za-z0-9_.-]{1,200}$/.test(id) && id !== "." && id !== "..";
}
