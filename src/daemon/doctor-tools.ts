/**
 * `fermix doctor`'s rows for the web tools and the MCP servers, from config
 * alone (doctor contacts no service): where web_fetch may reach, whether
 * web_search has what its backend needs, and for each MCP server whether
 * its program can be found (or where its endpoint is), whether a variable
 * it is given is empty, and who is offered its tools. Whether a server
 * really answers shows in the running daemon's health and status page.
 */
import { accessSync, constants, existsSync } from "node:fs";
import type { Env } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { webSettings } from "../config/web.ts";

export interface ToolDoctorRow {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

const row = (check: string, status: ToolDoctorRow["status"], detail: string): ToolDoctorRow => ({ check, status, detail });

/** web_fetch's reach and web_search's backend. */
export function webDoctorRows(config: Config): ToolDoctorRow[] {
  const web = webSettings(config);
  const allowed = web.allowHosts.length > 0 ? `; also ${web.allowHosts.join(", ")} (allow_hosts)` : "";
  const rows = [row("web fetch", "ok", `public addresses only${allowed}; at most ${web.maxBytes} bytes and ${web.timeoutMs / 1000} s a page`)];
  const search = web.search;
  switch (search.kind) {
    case "off":
      rows.push(row("web search", "ok", "off: set [fermix_core.web] search_backend (brave or searxng), or run `fermix setup`"));
      break;
    case "unusable":
      rows.push(row("web search", "fail", `${search.backend}: ${search.why}`));
      break;
    case "brave":
      rows.push(row("web search", "ok", `brave at ${search.url} (api key set)`));
      break;
    case "searxng":
      rows.push(row("web search", "ok", `searxng at ${search.url} (the instance must allow format=json)`));
      break;
  }
  return rows;
}

/** A row per configured MCP server. */
export function mcpDoctorRows(config: Config, env: Env, home: string): ToolDoctorRow[] {
  return Object.entries(config.fermix_core.mcp.servers).map(([name, server]) => {
    const check = `mcp ${name}`;
    if (!server.enabled) return row(check, "ok", "disabled");
    const offered = server.roles.length === 0 ? "offered to nobody (roles = [])" : `offered to ${server.roles.join(", ")}`;
    const problems: string[] = [];
    let where: string;
    if (server.command !== undefined) {
      const program = findProgram(server.command, env.PATH ?? "");
      if (!program) return row(check, "fail", `${server.command} is not found${server.command.includes("/") ? "" : " on PATH"}: the server cannot start`);
      const cwd = server.cwd ?? home;
      if (server.cwd !== undefined && !existsSync(cwd)) return row(check, "fail", `cwd ${cwd} does not exist: the server cannot start`);
      const empty = Object.entries(server.env)
        .filter(([, value]) => value === "")
        .map(([key]) => key);
      for (const key of empty)
        problems.push(`env ${key} is empty (keep its value in the keychain or secrets.toml as fermix_core.mcp.servers.${name}.env.${key})`);
      where = `stdio: ${program}${server.args.length > 0 ? ` with ${server.args.length} argument${server.args.length === 1 ? "" : "s"}` : ""}`;
    } else {
      const headers = Object.keys(server.headers);
      for (const [key, value] of Object.entries(server.headers)) if (value === "") problems.push(`header ${key} is empty`);
      where = `streamable HTTP at ${server.url}${headers.length > 0 ? ` (headers ${headers.join(", ")})` : ""}`;
    }
    const detail = `${where}; ${offered}; calls time out after ${server.timeout_seconds} s`;
    if (problems.length > 0) return row(check, "warn", `${detail}; ${problems.join("; ")}`);
    return row(check, server.roles.length === 0 ? "warn" : "ok", detail);
  });
}

/** The program a command names: a path (checked to be executable), or the first executable of that name on PATH. */
function findProgram(command: string, path: string): string | undefined {
  if (!command.includes("/")) return Bun.which(command, { PATH: path }) ?? undefined;
  try {
    accessSync(command, constants.X_OK);
    return command;
  } catch {
    return undefined;
  }
}
