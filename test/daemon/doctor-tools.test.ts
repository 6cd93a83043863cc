/**
 * `fermix doctor`'s rows for the web tools and MCP servers (src/daemon/doctor-tools.ts):
 * from config alone, what the owner needs to know before starting, and no
 * credential shown.
 */
import { expect, test } from "bun:test";
import { mcpDoctorRows, webDoctorRows } from "../../src/daemon/doctor-tools.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const config = (toml: string, env: Record<string, string> = {}) => loadedFrom(toml, env).config;

test("web search: off until a backend is chosen; brave fails without its key; the key is never shown", () => {
  expect(webDoctorRows(config(""))).toEqual([
    { check: "web fetch", status: "ok", detail: "public addresses only; at most 5000000 bytes and 30 s a page" },
    { check: "web search", status: "ok", detail: "off: set [fermix_core.web] search_backend (brave or searxng), or run `fermix setup`" },
  ]);
  expect(webDoctorRows(config('[fermix_core.web]\nsearch_backend = "brave"\nallow_hosts = ["nas.home"]'))).toEqual([
    { check: "web fetch", status: "ok", detail: "public addresses only; also nas.home (allow_hosts); at most 5000000 bytes and 30 s a page" },
    { check: "web search", status: "fail", detail: "brave: no brave_api_key (set it with fermix setup or BRAVE_API_KEY)" },
  ]);
  const withKey = webDoctorRows(config('[fermix_core.web]\nsearch_backend = "brave"', { BRAVE_API_KEY: "BSA-secret-key" }));
  expect(withKey[1]).toEqual({ check: "web search", status: "ok", detail: "brave at https://api.search.brave.com/res/v1/web/search (api key set)" });
  expect(JSON.stringify(withKey)).not.toContain("BSA-secret-key");
});

test("an MCP server: its program found or not, an empty variable, who is offered its tools; header values never shown", () => {
  const rows = mcpDoctorRows(
    config(`
[fermix_core.mcp.servers.files]
command = "${process.execPath}"
args = ["server.js"]
env = { TOKEN = "" }

[fermix_core.mcp.servers.missing]
command = "no-such-mcp-server-anywhere"

[fermix_core.mcp.servers.calendar]
url = "https://mcp.example/mcp"
headers = { Authorization = "Bearer cal-secret" }
roles = ["owner", "owner_shared_on"]

[fermix_core.mcp.servers.off]
command = "x"
enabled = false
`),
    { PATH: "/usr/bin:/bin" },
    "/home/you/.fermix",
  );
  expect(rows).toEqual([
    {
      check: "mcp files",
      status: "warn",
      detail: `stdio: ${process.execPath} with 1 argument; offered to owner; calls time out after 60 s; env TOKEN is empty (keep its value in the keychain or secrets.toml as fermix_core.mcp.servers.files.env.TOKEN)`,
    },
    { check: "mcp missing", status: "fail", detail: "no-such-mcp-server-anywhere is not found on PATH: the server cannot start" },
    {
      check: "mcp calendar",
      status: "ok",
      detail: "streamable HTTP at https://mcp.example/mcp (headers Authorization); offered to owner, owner_shared_on; calls time out after 60 s",
    },
    { check: "mcp off", status: "ok", detail: "disabled" },
  ]);
  expect(JSON.stringify(rows)).not.toContain("cal-secret");
});
