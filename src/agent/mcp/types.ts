/**
 * What the MCP hub and a connection agree on, without the SDK: the hub
 * imports the SDK (./connection.ts) only when a server is configured.
 */
import type { McpServerConfig } from "../../config/schema.ts";
import type { Fault } from "../../kernel/fault-line.ts";

/** A tool as the server lists it. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface McpConnection {
  /** Every tool the server lists now (all pages). */
  listTools(): Promise<McpToolInfo[]>;
  /** One tools/call; rejects with McpCallTimeout past `timeoutMs`. */
  callTool(name: string, args: Record<string, unknown>, options: { timeoutMs: number; signal: AbortSignal }): Promise<unknown>;
  /** The stdio program's process id (undefined over HTTP). */
  readonly pid?: number;
  close(): Promise<void>;
}

export interface ConnectEvents {
  /** The server said its tools changed (`notifications/tools/list_changed`). */
  toolsChanged(): void;
  /** The connection ended: the program exited, or the HTTP session broke. */
  closed(): void;
  /** A line the stdio program wrote on stderr, for the debug log. */
  stderr?(line: string): void;
}

/** Opens one connection; rejects with McpConnectError. What the hub is built with (tests give their own). */
export type Connector = (server: McpServerConfig, options: { cwd: string; timeoutMs: number }, events: ConnectEvents) => Promise<McpConnection>;

/** A connection that could not be made: its fault's class and status for pages, the cause for the log. */
export class McpConnectError extends Error {
  override name = "McpConnectError";
  constructor(
    readonly fault: Fault,
    options: { cause: unknown },
  ) {
    super("connection failed", options);
  }
}

/** A tools/call that took longer than the server's timeout_seconds. */
export class McpCallTimeout extends Error {
  override name = "McpCallTimeout";
}

/** A call that failed because the connection did (the program died, the HTTP session is gone), not because the server said no. */
export class McpTransportError extends Error {
  override name = "McpTransportError";
}
