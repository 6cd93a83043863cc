/**
 * What the workspace tools are built from: where they may reach (read fresh
 * on every call, so a grant made while a turn waits applies at once), the
 * sandbox runner for commands, and who answers the agent's access requests.
 */
import type { Logger } from "../../../kernel/log.ts";
import type { Telemetry } from "../../../kernel/telemetry.ts";
import type { GrantMode } from "../../../store/sandbox.ts";
import type { Reach } from "../../sandbox/paths.ts";
import { within } from "../../sandbox/paths.ts";
import type { SandboxPolicy } from "../../sandbox/policy.ts";
import type { SandboxRunner } from "../../sandbox/runner.ts";
import type { ToolContext } from "../types.ts";

export type AccessDecision = "granted" | "denied" | "timed_out";

/** The agent asks the owner for a path (already checked grantable). */
export interface AccessRequest {
  /** Real, absolute. */
  path: string;
  mode: GrantMode;
  reason: string;
  /** The turn's chat is one-to-one with its owner: the prompt may show its code. */
  direct: boolean;
}

/** Who answers request_access: the gateway's prompt-and-wait, or an editor's own permission dialog. */
export interface AccessBroker {
  /** Ask, wait for the decision (or the timeout, or the turn's stop), apply it; resolves with what became of it. */
  request(request: AccessRequest, ctx: ToolContext): Promise<AccessDecision>;
}

export interface WorkspaceDeps {
  /** The reach now (workspace, read-only parts, usable grants, home directory), without `canAsk`. */
  reach(): Omit<Reach, "canAsk">;
  /** The command policy now. */
  policy(): SandboxPolicy;
  /** The OS sandbox, or null where the machine has none (run_command is then not offered). */
  runner: SandboxRunner | null;
  /** run_command's longest timeout (ms): the default, and the cap on what the model asks for. */
  commandTimeoutMs: number;
  /** Output kept per stream (bytes). */
  outputLimit: number;
  /** The Fermix home and workspace, for judging what request_access may ask for. */
  fermixHome: string;
  workspace: string;
  access?: AccessBroker;
  log: Logger;
  telemetry: Telemetry;
}

/** The turn a tool set is built for, as the workspace tools need to know it (who may have them is the role table's business). */
export interface WorkspaceScope {
  /** request_access is offered to this turn: refusals tell the model it can ask. */
  canAsk: boolean;
  /** The chat is one-to-one with the sender: an access request's prompt may show its code. */
  direct: boolean;
}

/** A path as the model should see it: relative to the workspace inside it, absolute elsewhere. */
export function shownPath(real: string, workspace: string): string {
  if (real === workspace) return ".";
  return within(workspace, real) ? real.slice(workspace.length + 1) : real;
}
