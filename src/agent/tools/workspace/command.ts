/**
 * `run_command`: one command inside the OS sandbox (see src/agent/sandbox/),
 * given as a shell line or as an argv list, in a working directory of the
 * reach, with a timeout. The model gets the exit status and what the
 * command printed, cut in the middle past the output limit, with a note.
 */

import { existsSync, statSync } from "node:fs";
import { Type } from "@sinclair/typebox";
import { resolveToolPath } from "../../sandbox/paths.ts";
import type { Captured, RunResult } from "../../sandbox/runner.ts";
import { defineTool, type Tool, ToolError } from "../types.ts";
import { shownPath, type WorkspaceDeps } from "./deps.ts";

type Reach = ReturnType<WorkspaceDeps["reach"]> & { canAsk: boolean };

/** The argv for the model's `command`: a shell line runs under /bin/sh -c, a list runs as is. */
export function commandArgv(command: string | string[]): string[] {
  if (typeof command === "string") {
    if (command.trim() === "") throw new ToolError("command is empty");
    return ["/bin/sh", "-c", command];
  }
  if (command[0]!.trim() === "") throw new ToolError("the program name (command[0]) is empty");
  return command;
}

/** What the model reads back: how it ended, then each stream that printed anything. */
export function describeRun(result: RunResult, timeoutSeconds: number): string {
  const status = result.timedOut
    ? `killed: it ran past its ${timeoutSeconds} s timeout`
    : result.stopped
      ? "killed: the turn was stopped"
      : result.exitCode === null
        ? "killed by a signal"
        : `exit code ${result.exitCode}`;
  const section = (name: string, out: Captured) => (out.bytes === 0 ? [] : [`${name}:`, out.text.replace(/\n$/, "")]);
  const parts = [status, ...section("stdout", result.stdout), ...section("stderr", result.stderr)];
  const cut = [result.stdout, result.stderr].filter((s) => s.cut > 0);
  if (cut.length > 0) {
    parts.push(
      `[output truncated: ${cut.map((s) => `${s.cut} of ${s.bytes} bytes`).join(" and ")} cut from the middle; redirect to a file in the workspace and read it in pages to see all]`,
    );
  }
  if (result.stdout.bytes === 0 && result.stderr.bytes === 0) parts.push("(no output)");
  return parts.join("\n");
}

export function runCommandTool(deps: WorkspaceDeps, reach: () => Reach): Tool {
  const maxSeconds = Math.max(1, Math.floor(deps.commandTimeoutMs / 1000));
  return defineTool({
    name: "run_command",
    description:
      `Run a command in a sandbox: it sees the workspace (read-write, but SOUL.md and skills/ read-only), the paths granted to you and the system's programs — no other files of the home directory, a private /tmp, the network only when the owner allowed it, and only the environment variables the owner allowed. ` +
      `Give a shell line or a list of arguments. Runs in the workspace unless cwd says otherwise; killed after timeout_seconds (at most ${maxSeconds}).`,
    parameters: Type.Object(
      {
        command: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1 })], {
          description: 'a shell line ("ls -la | head") or the program and its arguments (["ls", "-la"])',
        }),
        cwd: Type.Optional(Type.String({ description: "working directory, relative to the workspace (default: the workspace)" })),
        // No `maximum`: a longer timeout than allowed is held to the cap rather than refused (the description states the cap).
        timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, description: `default and most: ${maxSeconds}` })),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      const runner = deps.runner;
      if (!runner) throw new ToolError("commands cannot run here: this machine has no sandbox");
      const argv = commandArgv(args.command);
      const r = reach();
      const cwd = resolveToolPath(args.cwd ?? ".", "read", r);
      if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new ToolError(`cwd ${shownPath(cwd, r.workspace)} is not a folder`);
      const seconds = Math.min(maxSeconds, args.timeout_seconds ?? maxSeconds);
      const result = await runner.run({
        policy: deps.policy(),
        argv,
        cwd,
        timeoutMs: seconds * 1000,
        outputLimit: deps.outputLimit,
        signal: ctx.signal,
      });
      return describeRun(result, seconds);
    },
  });
}
