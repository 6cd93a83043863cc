/**
 * A command-line session: through the running daemon's control socket when
 * there is one (same store, same queues), else the core in this process.
 * Either way the turn goes through the same gateway and agent.
 */
import type { Socket } from "bun";
import { primaryProvider } from "../agent/supervisor.ts";
import { cliProfile } from "../channels/cli/profile.ts";
import { encodeEvent, LineDecoder, type ServerEvent } from "../channels/cli/protocol.ts";
import { CLI_CHAT_ID, runCliTurn } from "../channels/cli/turn.ts";
import { loadConfig } from "../config/index.ts";
import type { Env } from "../config/load.ts";
import { createLogger } from "../kernel/log.ts";
import { socketAnswers } from "../kernel/unix-socket.ts";
import { conversationKey } from "../message/index.ts";

/** How long `fermix ask` without a daemon waits for the owner's MCP servers to connect before its turn (ms). */
const MCP_PATIENCE_MS = 10_000;

export interface CliSession {
  mode: "daemon" | "local";
  /** Run one turn; events arrive through `onEvent`; resolves with the outcome. */
  turn(text: string, onEvent: (event: ServerEvent) => void): Promise<string>;
  /** Stop the running turn. */
  stop(): void;
  close(): Promise<void>;
}

export class NoProvider extends Error {
  override name = "NoProvider";
  constructor() {
    super("no model provider is configured: run `fermix setup` (or add a [fermix_core.providers.<name>] table to config.toml)");
  }
}

export async function openSession(env: Env): Promise<CliSession> {
  const loaded = await loadConfig(env);
  if (!primaryProvider(loaded.config)) throw new NoProvider();
  if (await socketAnswers(loaded.paths.controlSocket)) return daemonSession(loaded.paths.controlSocket);
  return localSession(env, loaded);
}

async function daemonSession(path: string): Promise<CliSession> {
  const decoder = new LineDecoder();
  // Turns in flight by id: a chat may send a second message (or a /stop) while a reply is still coming.
  const turns = new Map<string, { onEvent: (e: ServerEvent) => void; resolve: (outcome: string) => void }>();
  let next = 0;
  const finish = (id: string, outcome: string) => {
    const turn = turns.get(id);
    turns.delete(id);
    turn?.resolve(outcome);
  };
  const socket: Socket<undefined> = await Bun.connect({
    unix: path,
    socket: {
      data(_socket, chunk) {
        for (const line of decoder.push(chunk)) {
          let event: ServerEvent;
          try {
            event = JSON.parse(line) as ServerEvent;
          } catch {
            continue;
          }
          const id = event.turn;
          if (id === undefined) continue;
          turns.get(id)?.onEvent(event);
          if (event.type === "done") finish(id, event.outcome);
          if (event.type === "error") finish(id, "failed");
        }
      },
      close() {
        for (const [id, turn] of [...turns]) {
          turn.onEvent({ type: "error", message: "the daemon closed the connection" });
          finish(id, "failed");
        }
      },
    },
  });
  return {
    mode: "daemon",
    turn(text, onEvent) {
      return new Promise((resolve) => {
        const id = String(++next);
        turns.set(id, { onEvent, resolve });
        socket.write(encodeEvent({ type: "turn", text, id }));
      });
    },
    stop() {
      socket.write(encodeEvent({ type: "stop" }));
    },
    async close() {
      socket.end();
    },
  };
}

async function localSession(env: Env, loaded: Awaited<ReturnType<typeof loadConfig>>): Promise<CliSession> {
  // Heavy modules load only here: the daemon path above never needs them.
  const { buildCore } = await import("../daemon/core.ts");
  const log = createLogger({ FERMIX_LOG_LEVEL: env.FERMIX_LOG_LEVEL ?? "error" });
  log.redactor.add(...loaded.secretValues);
  const core = buildCore({ loaded, log });
  await core.recover();
  // Without a daemon, this command starts the owner's MCP servers itself and gives them a moment to offer their tools.
  core.mcp.start();
  await core.mcp.settled(MCP_PATIENCE_MS);
  const conversation = conversationKey({ channel: cliProfile.name, chatId: CLI_CHAT_ID });
  return {
    mode: "local",
    turn: (text, onEvent) => runCliTurn(core.gateway, text, onEvent),
    stop: () => void core.queue.stop(conversation),
    close: () => core.close(),
  };
}
