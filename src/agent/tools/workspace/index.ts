/**
 * The workspace tools: which of them a turn is offered is the role table's
 * decision (src/gateway/roles.ts, docs/security.md) — the owner's turns only.
 * `run_command` only where the machine has an OS sandbox; `request_access`
 * only where someone answers access requests. Every call and
 * its outcome is logged and counted (../logged.ts).
 */

import { PathRefused } from "../../sandbox/paths.ts";
import { logged } from "../logged.ts";
import type { Tool } from "../types.ts";
import { requestAccessTool } from "./access.ts";
import { runCommandTool } from "./command.ts";
import type { WorkspaceDeps, WorkspaceScope } from "./deps.ts";
import { editFileTool, listDirTool, readFileTool, writeFileTool } from "./files.ts";
import { searchFilesTool } from "./search.ts";

export type { AccessBroker, AccessDecision, AccessRequest, WorkspaceDeps, WorkspaceScope } from "./deps.ts";

/** The names, in the order offered. */
export const WORKSPACE_TOOL_NAMES = ["read_file", "write_file", "edit_file", "list_dir", "search_files", "run_command", "request_access"] as const;

/** The tools for one turn's scope. */
export function workspaceTools(scope: WorkspaceScope, deps: WorkspaceDeps): Tool[] {
  const broker = deps.access;
  const reach = () => ({ ...deps.reach(), canAsk: scope.canAsk && broker !== undefined });
  const tools = [readFileTool(reach), writeFileTool(reach), editFileTool(reach), listDirTool(reach), searchFilesTool(reach)];
  if (deps.runner) tools.push(runCommandTool(deps, reach));
  if (broker) tools.push(requestAccessTool(deps, broker, scope.direct));
  return tools.map((tool) => logged(tool, { log: deps.log, telemetry: deps.telemetry, refused: (error) => error instanceof PathRefused }));
}

export { loggableArgs } from "../logged.ts";
