/** The MCP servers tests start: the reference "everything" server from the npm registry, and the small vault server in test/fakes. */
import { join } from "node:path";
import type { McpServerConfig } from "../../../src/config/schema.ts";

const ROOT = join(import.meta.dir, "../../..");
/** The reference server's entry point (a dev dependency), run with the bun running the tests. */
export const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
export const VAULT = join(ROOT, "test/fakes/mcp-server.ts");

/** A server table as the config loader leaves it, with its defaults. */
export function serverConfig(over: Partial<McpServerConfig>): McpServerConfig {
  return { enabled: true, args: [], env: {}, headers: {}, roles: ["owner"], timeout_seconds: 30, ...over };
}

export const everythingStdio = (over: Partial<McpServerConfig> = {}) => serverConfig({ command: process.execPath, args: [EVERYTHING, "stdio"], ...over });
export const vaultStdio = (over: Partial<McpServerConfig> = {}) => serverConfig({ command: process.execPath, args: [VAULT], ...over });
