/**
 * Realtime voice in the daemon: around the core's voice desk
 * (src/channels/realtime/desk.ts), the companion socket, listening while
 * `[fermix_core.realtime] enabled` is true (a reload starts or stops it),
 * the WebSocket companions of the /talk page, and what health reads.
 */
import { rmSync } from "node:fs";
import type { UnixSocketListener } from "bun";
import type { Companion, CompanionLink, VoiceDesk } from "../channels/realtime/desk.ts";
import { realtimeProfile } from "../channels/realtime/profile.ts";
import { type CompanionEvent, MAX_LINE, parseRequest } from "../channels/realtime/protocol.ts";
import { startCompanionSocket } from "../channels/realtime/socket.ts";
import { describeError } from "../kernel/errors.ts";
import type { RealtimeState } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import type { Core } from "./core.ts";

/** One companion on the /talk page's WebSocket, as the HTTP layer drives it. */
export interface TalkConnection {
  /** A text frame from the page. */
  message(text: string): void;
  close(): void;
}

export interface Realtime {
  desk: VoiceDesk;
  /** Listen on, or stop listening on, the companion socket as the config in force says. */
  apply(): Promise<void>;
  /** For health: the socket, the sessions, the companions, the provider's last fault. */
  state(): RealtimeState;
  /** Whether realtime is on now (the /talk page says so when it is not). */
  enabled(): boolean;
  /** A /talk WebSocket companion: `send` writes a text frame to the page. */
  talk(send: (text: string) => void, close: () => void): TalkConnection;
  /** End the live session and stop listening. */
  stop(): void;
}

export function buildRealtime(core: Core, log: Logger): Realtime {
  const rtLog = log.child({ component: realtimeProfile.name });
  const path = core.loaded.paths.realtimeSocket;
  const desk = core.voice;
  let listener: UnixSocketListener<unknown> | undefined;
  let applying: Promise<void> = Promise.resolve();

  const listen = async () => {
    const on = core.live.config.fermix_core.realtime.enabled;
    if (on && !listener) {
      try {
        listener = (await startCompanionSocket(path, desk, rtLog)) as UnixSocketListener<unknown>;
        rtLog.info("realtime voice listening", { socket: path });
      } catch (error) {
        rtLog.error("the realtime companion socket could not listen", { socket: path, error: describeError(error) });
      }
    } else if (!on && listener) {
      desk.endAll("disabled");
      listener.stop(true);
      listener = undefined;
      rmSync(path, { force: true });
    }
  };

  return {
    desk,
    apply() {
      applying = applying.then(listen);
      return applying;
    },
    state() {
      const status = desk.status();
      return {
        socketAlive: listener !== undefined,
        activeSessions: status.activeSessions,
        activeClients: status.activeClients,
        ...(status.fault ? { fault: status.fault } : {}),
      };
    },
    enabled: () => core.live.config.fermix_core.realtime.enabled,
    talk(send, close) {
      const companion: Companion = { send: (event: CompanionEvent) => send(JSON.stringify(event)), close };
      const link: CompanionLink = desk.attach(companion);
      return {
        message(text) {
          if (text.length > MAX_LINE)
            return companion.send({ type: "error", code: "bad_request", message: `a frame of ${text.length} characters (at most ${MAX_LINE})` });
          const request = parseRequest(text);
          if ("error" in request) companion.send({ type: "error", code: "bad_request", message: request.error });
          else link.handle(request);
        },
        close: () => link.detach(),
      };
    },
    stop() {
      desk.endAll("shutdown");
      // Only a socket this daemon made is removed: another daemon's (SocketInUse at start) stays.
      if (!listener) return;
      listener.stop(true);
      listener = undefined;
      rmSync(path, { force: true });
    },
  };
}
