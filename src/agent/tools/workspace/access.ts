/**
 * `request_access(path, mode, reason)`: the agent asks its owner for a path
 * outside the workspace. What may be asked for is checked first (it must
 * exist and keep clear of the Fermix home); then the broker prompts the
 * owner and the turn waits for the answer — granted, denied or timed out —
 * which is what the model reads back.
 */

import { homedir } from "node:os";
import { Type } from "@sinclair/typebox";
import type { GrantMode } from "../../../store/sandbox.ts";
import { accessTo, grantablePath } from "../../sandbox/paths.ts";
import { StringEnum } from "../arguments.ts";
import { defineTool, type Tool, ToolError } from "../types.ts";
import type { AccessBroker, WorkspaceDeps } from "./deps.ts";

const words = (mode: GrantMode) => (mode === "rw" ? "read-write" : "read-only");

export function requestAccessTool(deps: WorkspaceDeps, broker: AccessBroker, direct: boolean): Tool {
  return defineTool({
    name: "request_access",
    description:
      "Ask the owner for access to a file or folder outside the workspace. They get a prompt to approve; this waits for their answer (granted, denied or timed out). Ask only for what the task needs, read-only unless you must write.",
    parameters: Type.Object(
      {
        path: Type.String({ description: "absolute path (or ~/…) of the file or folder" }),
        mode: StringEnum(["ro", "rw"] as const satisfies readonly GrantMode[], { description: "ro: read; rw: read and write" }),
        reason: Type.String({ description: "one sentence the owner reads: what you need it for" }),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      if (args.path.trim() === "") throw new ToolError("path is empty: give the file or folder you need");
      const { mode } = args;
      const reason = args.reason.trim();
      if (reason === "") throw new ToolError("reason is required: the owner decides by it");
      const reach = deps.reach();
      const candidate = grantablePath(args.path, reach.homeDir || homedir(), { fermixHome: deps.fermixHome, workspace: deps.workspace });
      if ("refused" in candidate) throw new ToolError(`cannot ask for that: ${candidate.refused}`);
      const has = accessTo(candidate.path, { ...reach, canAsk: true });
      if (has === "rw" || has === mode) return `you already have ${words(has)} access to ${candidate.path}`;
      const decision = await broker.request({ path: candidate.path, mode, reason: reason.slice(0, 500), direct }, ctx);
      switch (decision) {
        case "granted":
          return `granted: ${words(mode)} access to ${candidate.path}. The file tools and run_command can use it now.`;
        case "denied":
          return `denied: the owner did not allow access to ${candidate.path}. Do not ask again for it in this conversation unless they say so.`;
        case "timed_out":
          return `timed out: the owner did not answer in time, so there is no access to ${candidate.path}. Tell them what you wanted it for; they can grant it with /sandbox grant.`;
      }
    },
  });
}
