/**
 * The web tools: `web_fetch` always, `web_search` while a backend is
 * configured and usable. Who is offered them is the role table's decision
 * (src/gateway/roles.ts, docs/security.md); each call is logged and counted
 * like a workspace tool's (../logged.ts), a refused address as "refused".
 */
import type { WebSettings } from "../../../config/web.ts";
import type { Logger } from "../../../kernel/log.ts";
import type { Telemetry } from "../../../kernel/telemetry.ts";
import { logged } from "../logged.ts";
import type { Tool } from "../types.ts";
import { webFetchTool } from "./fetch-tool.ts";
import { WebRefused } from "./reach.ts";
import { webSearchTool } from "./search.ts";

export interface WebToolDeps {
  /** The settings in force, read at each call. */
  settings(): WebSettings;
  log: Logger;
  telemetry: Telemetry;
}

/** The web tools for a turn, as the config in force has them. */
export function webTools(deps: WebToolDeps): Tool[] {
  const calls = { log: deps.log, telemetry: deps.telemetry, refused: (error: unknown) => error instanceof WebRefused };
  const tools = [webFetchTool({ settings: deps.settings })];
  const search = deps.settings().search;
  if (search.kind === "brave" || search.kind === "searxng") {
    tools.push(
      webSearchTool({
        backend: () => {
          const now = deps.settings().search;
          // A reload between the offer and the call that turned search off: the call says so.
          if (now.kind !== "brave" && now.kind !== "searxng") throw new WebRefused("web search was switched off");
          return now;
        },
        timeoutMs: () => deps.settings().timeoutMs,
      }),
    );
  }
  return tools.map((tool) => logged(tool, calls));
}
