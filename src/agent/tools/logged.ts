/**
 * Every call of a tool that reaches outside the conversation — the workspace
 * tools, web_fetch and web_search, a tool server's tools — is logged the same
 * way: the tool, the channel and conversation, its arguments (long or
 * content-bearing strings by their length only), its outcome and how long
 * it took, the result by its size only; and counted in telemetry. The logger
 * redacts known secrets.
 */
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import { resultText, type Tool, ToolError } from "./types.ts";

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

export interface CallLog {
  log: Logger;
  telemetry: Telemetry;
  /** Errors that are refusals by a boundary (a path out of reach, an address web_fetch may not reach), logged as "refused". */
  refused?: (error: unknown) => boolean;
}

/** `tool`, each call logged and counted. */
export function logged(tool: Tool, deps: CallLog): Tool {
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
        outcome = deps.refused?.(error) ? "refused" : "error";
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
