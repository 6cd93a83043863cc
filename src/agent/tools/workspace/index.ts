/**
 * The workspace tools: which of them a turn is offered is the role table's
 * decision (src/gateway/roles.ts, docs/security.md) — the owner's turns only.
 * `run_command` only where the machine has an OS sandbox; `request_access`
 * only where someone answers access requests. Every call and
 * its outcome is logged (the logger redacts known secrets; file contents and
 * results are logged by size only) and counted in telemetry.
 */

import { describeError } from "../../../kernel/errors.ts";
import { PathRefused } from "../../sandbox/paths.ts";
import { resultText, type Tool, ToolError } from "../types.ts";
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
  return tools.map((tool) => logged(tool, deps));
}

/** Arguments as they may be logged: long or content-bearing strings by their length only. */
export function loggableArgs(args: Record<string, unknown>): string {
  const shown: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (typeof value === "string" && (["content", "old_string", "new_string"].includes(key) || value.length > 200)) shown[key] = `<${value.length} chars>`;
    else shown[key] = value;
  }
  const text = JSON.stringify(shown);
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

function logged(tool: Tool, deps: WorkspaceDeps): Tool {
  const name = tool.spec.name;
  return {
    spec: tool.spec,
    async run(args, ctx) {
      const started = performance.now();
      const fields = { tool: name, channel: ctx.channel, conversation: ctx.conversation, args: loggableArgs(args) };
      let outcome: "ok" | "refused" | "error" = "ok";
      try {
        const output = await tool.run(args, ctx);
        deps.log.info("tool call", { ...fields, outcome, duration_ms: Math.round(performance.now() - started), result_chars: resultText(output).length });
        return output;
      } catch (error) {
        outcome = error instanceof PathRefused ? "refused" : "error";
        const log = error instanceof ToolError ? deps.log.info.bind(deps.log) : deps.log.warn.bind(deps.log);
        log("tool call", { ...fields, outcome, duration_ms: Math.round(performance.now() - started), error: describeError(error) });
        throw error;
      } finally {
        deps.telemetry.emit("tool.call", {
          measurements: { duration_ms: performance.now() - started },
          metadata: { channel: ctx.channel, tool: name, outcome },
        });
      }
    },
  };
}
