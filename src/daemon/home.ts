/** Create the home and its private directories, owner-only (0700). */
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import type { Paths } from "../config/paths.ts";

/** Ensure home, workspace and grants exist; returns whether the home is readable by others. */
export function ensureHome(paths: Paths): { loosePermissions: boolean } {
  const created = !existsSync(paths.home);
  mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  if (created) chmodSync(paths.home, 0o700);
  for (const dir of [paths.workspace, paths.grants]) {
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  return { loosePermissions: (statSync(paths.home).mode & 0o077) !== 0 };
}
