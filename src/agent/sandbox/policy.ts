/**
 * The sandbox policy of one command: which paths it sees (and how), whether
 * it has the network, and its whole environment — built from the sandbox's
 * state (grants, env rules, presets, network) and never from the daemon's
 * own environment beyond the names the rules pass through. Pure: the tests
 * read what a policy allows without running anything.
 */
import { join } from "node:path";
import type { EnvRule, GrantMode, SandboxState } from "../../store/sandbox.ts";
import { expandHome, realPath, within } from "./paths.ts";
import { findPreset, type Preset } from "./presets.ts";

export interface SandboxPolicy {
  /** The workspace, real path: bound read-write. */
  workspace: string;
  /** Inside the workspace, bound read-only on top (SOUL.md, skills/), where they exist. */
  readOnlyInWorkspace: string[];
  /** Grants in binding order (outer before inner). */
  grants: Array<{ path: string; mode: GrantMode }>;
  /** Read-only paths the presets switched on add, where they exist. */
  presetPaths: string[];
  network: boolean;
  /** The command's entire environment. */
  env: Record<string, string>;
}

/** Daemon variables every command gets when they are set: locale, time zone, terminal type. */
export const BASE_ALLOW = ["LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM"] as const;
export const SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/** A variable name that looks like it holds a credential: passing or setting one is a risky change. */
export function isSecretName(name: string): boolean {
  return /(KEY|TOKEN|SECRET|PASS(WORD|WD)?|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE)/i.test(name);
}

/** A valid environment variable name (POSIX portable). */
export function isEnvName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

export interface PolicyInput {
  state: SandboxState;
  /** `[fermix_core.sandbox] network`: applies until /sandbox network sets it. */
  networkDefault: boolean;
  workspace: string;
  /** The Fermix home: a grant that holds it or lies in it is never used, whatever the database says. */
  fermixHome: string;
  homeDir: string;
  /** The daemon's environment: only names the rules allow are read from it. */
  daemonEnv: Record<string, string | undefined>;
  exists: (path: string) => boolean;
}

/** The presets switched on, known ones only. */
export function activePresets(state: Pick<SandboxState, "presets">): Preset[] {
  return state.presets.map(findPreset).filter((p): p is Preset => p !== undefined);
}

/** The network as it applies now: the stored setting over the config default, widened by an active preset that needs it. */
export function effectiveNetwork(state: SandboxState, networkDefault: boolean): boolean {
  return (state.network ?? networkDefault) || activePresets(state).some((p) => p.network);
}

export function buildPolicy(input: PolicyInput): SandboxPolicy {
  const { state, homeDir } = input;
  const workspace = realPath(input.workspace);
  const presets = activePresets(state);
  const presetPaths = [...new Set(presets.flatMap((p) => p.readOnly).map((p) => expandHome(p, homeDir)))].filter(input.exists).map(realPath);
  const grants = usableGrants(state.grants, input.fermixHome, input.exists);
  return {
    workspace,
    readOnlyInWorkspace: [join(workspace, "SOUL.md"), join(workspace, "skills")].filter(input.exists),
    grants,
    presetPaths: presetPaths.filter((p) => !within(workspace, p)),
    network: effectiveNetwork(state, input.networkDefault),
    env: commandEnv({ rules: state.env, presets, daemonEnv: input.daemonEnv, workspace, homeDir }),
  };
}

/**
 * The grants that may be used, outer before inner: those that exist and keep
 * clear of the Fermix home (a grant is checked when made; this holds even
 * for a database edited by hand).
 */
export function usableGrants(grants: SandboxState["grants"], fermixHome: string, exists: (path: string) => boolean): Array<{ path: string; mode: GrantMode }> {
  const home = realPath(fermixHome);
  return grants
    .filter((g) => exists(g.path) && !within(g.path, home) && !within(home, g.path))
    .sort((a, b) => a.path.length - b.path.length)
    .map((g) => ({ path: g.path, mode: g.mode }));
}

/**
 * A command's environment, in layers: fixed defaults (PATH, HOME = the
 * workspace, TMPDIR), the base names and the presets' names passed through
 * from the daemon when set, the presets' values, then the owner's rules —
 * `allow` passes a daemon variable, `set` sets a value, `deny` removes a
 * name whatever set it. Nothing else of the daemon's environment gets in.
 */
export function commandEnv(input: {
  rules: readonly EnvRule[];
  presets: readonly Preset[];
  daemonEnv: Record<string, string | undefined>;
  workspace: string;
  homeDir: string;
}): Record<string, string> {
  const { daemonEnv } = input;
  const extraPath = input.presets.flatMap((p) => p.path).map((p) => expandHome(p, input.homeDir));
  const env: Record<string, string> = {
    PATH: [...new Set(extraPath), SANDBOX_PATH].join(":"),
    HOME: input.workspace,
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
  };
  const pass = (name: string) => {
    const value = daemonEnv[name];
    if (value !== undefined) env[name] = value;
  };
  for (const name of BASE_ALLOW) pass(name);
  for (const preset of input.presets) {
    for (const name of preset.envAllow) pass(name);
    Object.assign(env, preset.envSet);
  }
  for (const rule of input.rules) {
    if (rule.rule === "allow") pass(rule.name);
    if (rule.rule === "set") env[rule.name] = rule.value ?? "";
  }
  for (const rule of input.rules) if (rule.rule === "deny") delete env[rule.name];
  return env;
}
