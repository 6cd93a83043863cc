/**
 * One connection to one MCP server through the official SDK: a program
 * started on stdio (`StdioClientTransport`; it gets only the variables the
 * config names, over a minimal PATH, HOME, USER, SHELL and TERM — never the
 * daemon's own environment, which holds its keys) or an endpoint over
 * streamable HTTP (`StreamableHTTPClientTransport`, with the configured
 * headers). The SDK is heavy (zod, ajv), so the hub imports this module only
 * when a server is configured (docs/performance.md).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Fault, statusFault } from "../../kernel/fault-line.ts";
import { VERSION } from "../../version.ts";
import { type Connector, McpCallTimeout, McpConnectError, type McpToolInfo, McpTransportError } from "./types.ts";

/** Why a connection could not be made, as a fault class and status (never the server's words). */
function connectFault(error: unknown): Fault {
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400) return { fault: statusFault(error.code), status: error.code };
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return { fault: "timeout" };
  return { fault: "unreachable" };
}

export const connectSdk: Connector = async (server, options, events) => {
  const client = new Client({ name: "fermix", version: VERSION }, { capabilities: {} });
  let transport: Transport;
  let stdio: StdioClientTransport | undefined;
  if (server.command !== undefined) {
    stdio = new StdioClientTransport({ command: server.command, args: server.args, env: server.env, cwd: server.cwd ?? options.cwd, stderr: "pipe" });
    let pending = "";
    stdio.stderr?.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") events.stderr?.(line);
    });
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(server.url!), { requestInit: { headers: server.headers } });
  }
  // Closed is news only once connected: a connection that fails to open is the caller's rejection.
  let connected = false;
  let closed = false;
  client.onclose = () => {
    if (closed || !connected) return;
    closed = true;
    events.closed();
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => events.toolsChanged());
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (error) {
    closed = true;
    await client.close().catch(() => {});
    throw new McpConnectError(connectFault(error), { cause: error });
  }
  connected = true;
  return {
    get pid() {
      return stdio?.pid ?? undefined;
    },
    async listTools() {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: options.timeoutMs });
        for (const tool of page.tools)
          tools.push({ name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: tool.inputSchema });
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    async callTool(name, args, call) {
      try {
        return await client.callTool({ name, arguments: args }, undefined, { timeout: call.timeoutMs, signal: call.signal });
      } catch (error) {
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
          throw new McpCallTimeout(`no answer within ${Math.round(call.timeoutMs / 1000)} s`);
        // The server answered with an error of its own: the call failed, the connection stands.
        if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) throw error;
        if (call.signal.aborted) throw error;
        throw new McpTransportError("the connection to the server failed", { cause: error });
      }
    },
    async close() {
      closed = true;
      await client.close().catch(() => {});
    },
  };
};
