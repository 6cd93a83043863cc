/**
 * A small MCP server on stdio, built with the official SDK's own server
 * (`McpServer`), for what the reference "everything" server cannot show on
 * demand: a tool list that changes while connected. Run it with bun:
 *
 *   bun test/fakes/mcp-server.ts
 *
 * Tools: `unlock` registers `vault_open`, which makes the SDK send
 * `notifications/tools/list_changed`; `vault_open` answers a secret word;
 * `slow` never answers (a call's timeout); `env` answers the variable named
 * (what the program was given). With FAKE_MCP_PID_FILE set it writes its
 * process id there, so a test can kill it.
 */
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

if (process.env.FAKE_MCP_PID_FILE) writeFileSync(process.env.FAKE_MCP_PID_FILE, String(process.pid));

const server = new McpServer({ name: "fermix-test-vault", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });

server.registerTool("unlock", { description: "Unlock the vault: adds the vault_open tool.", inputSchema: {} }, async () => {
  server.registerTool("vault_open", { description: "Open the vault and read the word inside.", inputSchema: {} }, async () => ({
    content: [{ type: "text", text: "the word in the vault is PERIWINKLE" }],
  }));
  return { content: [{ type: "text", text: "unlocked" }] };
});

server.registerTool("slow", { description: "Never answers.", inputSchema: {} }, () => new Promise(() => {}));

server.registerTool("env", { description: "The value of an environment variable.", inputSchema: { name: z.string() } }, async ({ name }) => ({
  content: [{ type: "text", text: `${name}=${process.env[name] ?? "(unset)"}` }],
}));

await server.connect(new StdioServerTransport());
