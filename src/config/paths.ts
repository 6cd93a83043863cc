import { homedir } from "node:os";
import { join } from "node:path";

/** Every file Fermix keeps, derived from one home directory (docs/operations.md "Backups"). */
export interface Paths {
  home: string;
  config: string;
  database: string;
  acpSocket: string;
  controlSocket: string;
  /** Realtime voice companions (`fermix talk`, companion apps): 0600, like the ACP socket. */
  realtimeSocket: string;
  workspace: string;
  grants: string;
  soul: string;
  secrets: string;
}

/** `$FERMIX_HOME`, else `~/.fermix`. */
export function resolveHome(env: Record<string, string | undefined>): string {
  if (env.FERMIX_HOME && env.FERMIX_HOME.trim() !== "") return env.FERMIX_HOME;
  return join(env.HOME && env.HOME !== "" ? env.HOME : homedir(), ".fermix");
}

export function pathsFor(home: string): Paths {
  const workspace = join(home, "workspace");
  return {
    home,
    config: join(home, "config.toml"),
    database: join(home, "fermix.db"),
    acpSocket: join(home, "acp.sock"),
    controlSocket: join(home, "control.sock"),
    realtimeSocket: join(home, "realtime.sock"),
    workspace,
    grants: join(home, "grants"),
    soul: join(workspace, "SOUL.md"),
    secrets: join(home, "secrets.toml"),
  };
}
