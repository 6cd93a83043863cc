/**
 * The owner's MCP servers, kept running: each configured server is
 * connected at start (without holding the start up), its tools offered as
 * `<server>__<tool>` with their own schemas, and listed again whenever it
 * says they changed (`notifications/tools/list_changed`). A server that
 * cannot be reached, exits or loses its session has its tools withdrawn
 * and is connected again with backoff (1 s, doubling, at most a minute),
 * forever; its state and tool count are what health, the status page and
 * the log show — in our words, never the server's.
 *
 * Who is offered which server's tools is the role table's decision
 * (src/gateway/roles.ts, by each server's `roles`); every call is logged
 * and counted like a workspace tool's (../tools/logged.ts), has its
 * server's timeout, and answers inside the untrusted envelope (./content.ts).
 *
 * The set of servers follows the config in force: `apply()` after a reload
 * starts the new ones, stops the removed ones and restarts the changed ones.
 */

import type { McpServerConfig } from "../../config/schema.ts";
import { describeError } from "../../kernel/errors.ts";
import { faultLine } from "../../kernel/fault-line.ts";
import type { McpServerHealth } from "../../kernel/health.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import { untrusted } from "../../message/untrusted.ts";
import { logged } from "../tools/logged.ts";
import { type Tool, ToolError } from "../tools/types.ts";
import { mcpToolResult } from "./content.ts";
import { offeredName } from "./names.ts";
import { type Connector, McpCallTimeout, McpConnectError, type McpConnection, type McpToolInfo, McpTransportError } from "./types.ts";

export type McpServerState = McpServerHealth["state"];

export interface McpHubOptions {
  /** The servers in force, read at start and at each apply(). */
  servers(): Readonly<Record<string, McpServerConfig>>;
  /** Where a stdio server starts when it names no cwd (the Fermix home). */
  home: string;
  log: Logger;
  telemetry: Telemetry;
  /** Default: the SDK (./connection.ts), imported on first use. */
  connector?: Connector;
  /** First reconnection delay and the cap (ms); default 1 s and 60 s. */
  backoff?: { firstMs: number; maxMs: number };
  /** How long connecting and listing tools may take (ms); default 30 s. */
  connectTimeoutMs?: number;
}

/** The longest description of a server's tool the model is shown. */
const MAX_DESCRIPTION = 1000;

interface Entry {
  name: string;
  config: McpServerConfig;
  state: McpServerState;
  connection?: McpConnection;
  tools: Tool[];
  /** Failed connections since the last success: the backoff's exponent. */
  failures: number;
  timer?: ReturnType<typeof setTimeout>;
  /** Bumped whenever what is under way for this entry is abandoned; callbacks of an older generation do nothing. */
  generation: number;
  problem?: string;
}

export class McpHub {
  private readonly entries = new Map<string, Entry>();
  private running = false;

  constructor(private readonly options: McpHubOptions) {}

  /** Connect every enabled server, in the background: returns at once. */
  start(): void {
    this.running = true;
    this.apply();
  }

  /** Follow the config in force: new servers start, removed ones stop, changed ones restart. */
  apply(): void {
    if (!this.running) return;
    const wanted = this.options.servers();
    for (const [name, entry] of this.entries) {
      if (!wanted[name] || !Bun.deepEquals(wanted[name], entry.config)) {
        void this.retire(entry);
        this.entries.delete(name);
      }
    }
    for (const [name, config] of Object.entries(wanted)) {
      if (this.entries.has(name)) continue;
      const entry: Entry = { name, config, state: config.enabled ? "starting" : "disabled", tools: [], failures: 0, generation: 0 };
      this.entries.set(name, entry);
      if (config.enabled) void this.launch(entry);
    }
  }

  /** The tools of every server that is ready now. */
  tools(): Tool[] {
    return [...this.entries.values()].flatMap((entry) => (entry.state === "ready" ? entry.tools : []));
  }

  /** Every configured server's state, in config order. */
  status(): McpServerHealth[] {
    return [...this.entries.values()].map((entry) => ({
      name: entry.name,
      transport: entry.config.command !== undefined ? "stdio" : "http",
      state: entry.state,
      tools: entry.state === "ready" ? entry.tools.length : 0,
      ...(entry.problem && entry.state !== "ready" ? { problem: entry.problem } : {}),
    }));
  }

  /** Resolves once no server is still on its first connection, or after `timeoutMs` (`fermix ask` without a daemon waits this long). */
  async settled(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ([...this.entries.values()].some((entry) => entry.state === "starting") && Date.now() < deadline) await Bun.sleep(25);
  }

  /** Disconnect every server (a stdio program is ended). */
  async stop(): Promise<void> {
    this.running = false;
    const closing = [...this.entries.values()].map((entry) => this.retire(entry));
    this.entries.clear();
    await Promise.all(closing);
  }

  private get log(): Logger {
    return this.options.log;
  }

  /** Abandon whatever this entry has under way and close its connection. */
  private retire(entry: Entry): Promise<void> {
    entry.generation++;
    clearTimeout(entry.timer);
    const connection = entry.connection;
    entry.connection = undefined;
    entry.tools = [];
    return connection ? connection.close().catch(() => {}) : Promise.resolve();
  }

  private async launch(entry: Entry): Promise<void> {
    const generation = ++entry.generation;
    const current = () => entry.generation === generation && this.running;
    entry.state = entry.failures === 0 ? "starting" : "restarting";
    const timeoutMs = this.options.connectTimeoutMs ?? 30_000;
    try {
      const connector = this.options.connector ?? (await import("./connection.ts")).connectSdk;
      const connection = await connector(
        entry.config,
        { cwd: this.options.home, timeoutMs },
        {
          toolsChanged: () => {
            if (current()) void this.list(entry, generation).catch((error) => this.lost(entry, generation, "did not list its tools", error));
          },
          closed: () => {
            if (current()) this.lost(entry, generation, entry.config.command !== undefined ? "the program exited" : "the connection closed");
          },
          stderr: (line) => this.log.debug("mcp server stderr", { server: entry.name, line }),
        },
      );
      if (!current()) {
        await connection.close();
        return;
      }
      entry.connection = connection;
      await this.list(entry, generation);
      if (!current()) return;
      entry.state = "ready";
      entry.failures = 0;
      entry.problem = undefined;
      this.log.info("mcp server ready", { server: entry.name, tools: entry.tools.length, ...(connection.pid ? { pid: connection.pid } : {}) });
    } catch (error) {
      if (!current()) return;
      const problem =
        error instanceof McpConnectError
          ? entry.config.command !== undefined && error.fault.fault === "unreachable"
            ? "could not start"
            : faultLine(error.fault, "the server")
          : "did not list its tools";
      this.lost(entry, generation, problem, error);
    }
  }

  /** List the server's tools again and offer them under their names. */
  private async list(entry: Entry, generation: number): Promise<void> {
    const connection = entry.connection;
    if (!connection) return;
    const listed = await connection.listTools();
    if (entry.generation !== generation) return;
    const taken = new Set<string>();
    entry.tools = listed.map((info) => {
      const name = offeredName(entry.name, info.name, taken);
      taken.add(name);
      return this.toolOf(entry, info, name);
    });
    if (entry.state === "ready") this.log.info("mcp server tools changed", { server: entry.name, tools: entry.tools.length });
  }

  /** The connection is gone or never came: withdraw the tools and try again after the backoff. */
  private lost(entry: Entry, generation: number, problem: string, error?: unknown): void {
    if (entry.generation !== generation || !this.running) return;
    void this.retire(entry);
    entry.state = "restarting";
    entry.problem = problem;
    const { firstMs, maxMs } = this.options.backoff ?? { firstMs: 1000, maxMs: 60_000 };
    const delay = Math.min(firstMs * 2 ** entry.failures, maxMs);
    entry.failures++;
    const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
    this.log.warn("mcp server unavailable; connecting again", {
      server: entry.name,
      problem,
      retry_in_ms: delay,
      ...(cause !== undefined ? { error: describeError(cause) } : {}),
    });
    entry.timer = setTimeout(() => {
      if (this.entries.get(entry.name) === entry && this.running) void this.launch(entry);
    }, delay);
    entry.timer.unref?.();
  }

  /** A server's tool as the model is offered it: its name, description and schema; a call goes to the connection in force. */
  private toolOf(entry: Entry, info: McpToolInfo, name: string): Tool {
    const server = entry.name;
    const description = `${(info.description ?? info.name).slice(0, MAX_DESCRIPTION)} (a tool of the MCP server "${server}")`;
    const tool: Tool = {
      spec: { name, description, parameters: objectSchema(info.inputSchema) },
      run: async (args, ctx) => {
        const connection = entry.connection;
        const generation = entry.generation;
        if (!connection || entry.state !== "ready")
          throw new ToolError(`the tool server ${server} is not running right now (it is being restarted); try again in a moment`);
        const timeoutMs = entry.config.timeout_seconds * 1000;
        let result: unknown;
        try {
          result = await connection.callTool(info.name, args, { timeoutMs, signal: ctx.signal });
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          if (error instanceof McpCallTimeout) throw new ToolError(`the tool server ${server} did not answer within ${entry.config.timeout_seconds} s`);
          if (error instanceof McpTransportError) {
            this.lost(entry, generation, entry.config.command !== undefined ? "the program stopped answering" : "the connection failed", error);
            throw new ToolError(`the connection to the tool server ${server} failed; it is being restarted`);
          }
          throw new ToolError(`the tool server ${server} refused the call:\n${untrusted(`tool server ${server}`, describeError(error))}`);
        }
        return mcpToolResult({ server, tool: info.name }, result);
      },
    };
    return logged(tool, { log: this.log, telemetry: this.options.telemetry });
  }
}

/** A tool's input schema as function parameters: always an object with properties; `$schema` left out (some model APIs refuse it). */
export function objectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  const properties = typeof rest.properties === "object" && rest.properties !== null ? rest.properties : {};
  return { ...rest, type: "object", properties };
}
