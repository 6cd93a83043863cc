/**
 * The workspace sandbox, put together from config: its stored state, the
 * confirmation codes, the OS sandbox this machine has (bubblewrap, or
 * sandbox-exec on macOS; none: run_command is not offered), the access
 * desk that prompts the owner, and the workspace tools each turn is offered
 * (the owner's turns only). The core hands the pieces to the gateway.
 */
import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { detectBackend, INSTALL_BWRAP, probeBackend, type SandboxBackend } from "../agent/sandbox/detect.ts";
import { realPath } from "../agent/sandbox/paths.ts";
import { buildPolicy, isSecretName, usableGrants } from "../agent/sandbox/policy.ts";
import { SandboxRunner } from "../agent/sandbox/runner.ts";
import type { Tool, ToolContext } from "../agent/tools/types.ts";
import type { AccessDecision } from "../agent/tools/workspace/index.ts";
import { workspaceTools } from "../agent/tools/workspace/index.ts";
import { profileOf } from "../channels/registry.ts";
import type { LiveConfig } from "../config/live.ts";
import { AccessDesk, type ApprovalAsk, grantAccess } from "../gateway/access.ts";
import { Confirmations } from "../gateway/confirm.ts";
import type { ToolScope } from "../gateway/deps.ts";
import { answerPress } from "../gateway/press.ts";
import { mayUse } from "../gateway/roles.ts";
import { applyChange, changedBy, type SandboxChange, type SandboxControl } from "../gateway/sandbox-control.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type { ButtonPress, PressResult } from "../message/index.ts";
import type { ConfirmationStore } from "../store/confirmations.ts";
import { SandboxStore } from "../store/sandbox.ts";

export interface SandboxOptions {
  /** The config in force: every setting is read when it is used, so a reload applies to the next command, code or press. */
  live: LiveConfig;
  db: Database;
  /** Where confirmation codes are kept (the retention sweep deletes old ones). */
  codes: ConfirmationStore;
  log: Logger;
  telemetry: Telemetry;
  /** The daemon's environment: $HOME, $PATH (where bwrap is looked for), and what env `allow` rules pass through. */
  env: Record<string, string | undefined>;
  /** The OS sandbox; undefined: detected on this machine; null: none. */
  backend?: SandboxBackend | null;
}

export interface Sandbox {
  control: SandboxControl;
  /** The workspace tools for a turn (one of the core's extraTools offers, src/daemon/core.ts). */
  tools(scope: ToolScope): Tool[];
  /** A button press from a channel (AdapterContext.press). */
  press(press: ButtonPress): Promise<PressResult>;
  /** Ask the owner for a go-ahead that grants nothing (a provider's safety check) and wait, as for an access request. */
  approve(ask: ApprovalAsk, ctx: ToolContext): Promise<AccessDecision>;
  /**
   * How a program the assistant starts outside run_command (the desktop's) runs under the sandbox's rules
   * in force: the commands' environment and network setting, the workspace as its folder, and bubblewrap
   * where it runs here (null: none).
   */
  programs(): { env: Record<string, string>; network: boolean; cwd: string; bwrap: string | null };
}

export function buildSandbox(options: SandboxOptions): Sandbox {
  const { live, db, log, telemetry, env } = options;
  const settings = () => live.config.fermix_core.sandbox;
  const { paths } = live.loaded;
  const homeDir = env.HOME && env.HOME !== "" ? env.HOME : homedir();
  const store = new SandboxStore(db);
  const sandboxLog = log.child({ component: "sandbox" });
  // skills/ is read-only to the tools: it must exist to be bound read-only, or a command could create it.
  const skills = join(paths.workspace, "skills");
  if (!existsSync(skills)) mkdirSync(skills, { recursive: true, mode: 0o700 });
  for (const rule of store.env()) if (rule.rule === "set" && isSecretName(rule.name) && rule.value) log.redactor.add(rule.value);

  // Found on first use, not at start: probing bubblewrap runs it (~6 ms), and most turns never need it.
  let found: { backend: SandboxBackend | null; runner: SandboxRunner | null } | undefined;
  const os = () => {
    if (found) return found;
    const backend = options.backend === undefined ? workingBackend(env, sandboxLog) : options.backend;
    found = { backend, runner: backend ? new SandboxRunner(backend) : null };
    return found;
  };
  // What a confirmed code applies, in whichever process it is answered: a proposal's change, or the grant an access request asked for.
  const confirmations = new Confirmations<SandboxChange>({
    store: options.codes,
    get ttlMs() {
      return settings().confirm_ttl_seconds * 1000;
    },
    apply: (code) =>
      code.kind === "access" ? grantAccess(code, { store, log: sandboxLog }) : applyChange(code.grants, control, changedBy(code.channel, code.senderId)),
    local: (channel) => profileOf(channel).local,
  });
  const desk = new AccessDesk({
    confirmations,
    store,
    get timeoutMs() {
      return settings().access_request_timeout_seconds * 1000;
    },
    log: sandboxLog,
    telemetry,
  });
  const workspace = realPath(paths.workspace);
  const control: SandboxControl = {
    store,
    confirmations,
    get networkDefault() {
      return settings().network;
    },
    fermixHome: paths.home,
    workspace,
    homeDir,
    get backend() {
      const { backend } = os();
      return backend ? (backend.kind === "bwrap" ? "bubblewrap" : "sandbox-exec") : null;
    },
    installHint: INSTALL_BWRAP,
    redact: (value) => log.redactor.add(value),
    telemetry,
  };
  const toolDeps = {
    reach: () => ({
      workspace,
      readOnly: [join(workspace, "SOUL.md"), join(workspace, "skills")],
      grants: usableGrants(store.grants(), paths.home, existsSync),
      homeDir,
    }),
    policy: () =>
      buildPolicy({ state: store.state(), networkDefault: settings().network, workspace, fermixHome: paths.home, homeDir, daemonEnv: env, exists: existsSync }),
    get runner() {
      return os().runner;
    },
    get commandTimeoutMs() {
      return settings().command_timeout_seconds * 1000;
    },
    get outputLimit() {
      return settings().command_output_limit_bytes;
    },
    fermixHome: paths.home,
    workspace,
    access: desk,
    log: sandboxLog,
    telemetry,
  };
  return {
    control,
    tools: (scope) => workspaceTools({ canAsk: mayUse("request_access", scope.audience), direct: scope.audience.direct }, toolDeps),
    // Judged by the config in force when the button is pressed: a former owner's press counts for nothing.
    press: async (press) => answerPress(press, { config: live.config, profiles: profileOf, sandbox: control, log: sandboxLog }),
    approve: (ask, ctx) => desk.approve(ask, ctx),
    programs: () => {
      const policy = toolDeps.policy();
      const { backend } = os();
      return { env: policy.env, network: policy.network, cwd: workspace, bwrap: backend?.kind === "bwrap" ? backend.path : null };
    },
  };
}

/** The OS sandbox found here, if it also runs (bubblewrap needs user namespaces); else null, said once in the log. */
function workingBackend(env: Record<string, string | undefined>, log: Logger): SandboxBackend | null {
  const backend = detectBackend(process.platform, env.PATH);
  if (!backend) {
    log.warn(`no OS sandbox on this machine: run_command is not offered (${INSTALL_BWRAP})`);
    return null;
  }
  const probe = probeBackend(backend);
  if (probe.ok) return backend;
  log.warn("the OS sandbox does not run here: run_command is not offered", { sandbox: backend.path, reason: probe.reason });
  return null;
}
