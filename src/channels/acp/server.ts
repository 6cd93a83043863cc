/**
 * One ACP client connection: the SDK's agent side over newline-delimited
 * JSON, bridged to the accepted Bun socket. Sessions it opens are its own;
 * a prompt runs through the gateway like any channel's message and streams
 * back as it is produced; when the client goes away, its turns are cancelled
 * and its sessions forgotten.
 */
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { Socket } from "bun";
import type { IngestOptions, IngestOutcome, TurnFault } from "../../gateway/ingest.ts";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { FetchedMedia, InboundMessage, PermissionAsk } from "../../message/index.ts";
import { VERSION } from "../../version.ts";
import { type SocketPipe, socketPipe } from "./pipe.ts";
import { acpPort, permissionRequest } from "./port.ts";
import { cancelSession, type PromptTurn, promptMessage, type SessionRegistry } from "./session.ts";
import { AcpTurnStream, UpdateMapper } from "./stream.ts";

/** What a connection needs from the adapter: shared sessions and media, and the gateway's entry points. */
export interface AcpServerDeps {
  sessions: SessionRegistry;
  /** Whether the primary provider sees images: advertised as the image prompt capability. */
  vision: boolean;
  ingest(message: InboundMessage, options: IngestOptions): Promise<IngestOutcome>;
  stopConversation(key: string): void;
  /** Image bytes of running prompts, by media ref: what the adapter's fetchMedia serves. */
  media: Map<string, FetchedMedia>;
  /** Prompts of every connection that have not answered yet (a departed client's included). */
  running: Set<PromptTurn>;
  log: Logger;
}

/** A served connection, kept as the socket's data. */
export interface AcpConnection {
  readonly id: number;
  readonly pipe: SocketPipe;
  /** The client went away (or the daemon stops): cancel its turns, forget its sessions. */
  dispose(): void;
}

/** What Fermix tells an editor at `initialize`. */
export function initializeResponse(vision: boolean): acp.InitializeResponse {
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {
      // Sessions are not reloaded: an editor starts a new one after a restart.
      loadSession: false,
      promptCapabilities: { image: vision, audio: false, embeddedContext: false },
    },
    agentInfo: { name: "fermix", title: "Fermix", version: VERSION },
    authMethods: [],
  };
}

/** The JSON-RPC error code of a prompt whose turn failed (the implementation-defined server-error range). */
export const TURN_FAILED = -32001;

/** Serve ACP on one accepted socket. */
export function serveConnection<Data>(socket: Socket<Data>, id: number, deps: AcpServerDeps): AcpConnection {
  const pipe = socketPipe(socket);
  const log = deps.log.child({ connection: id });
  let disposed = false;

  const prompt = async (params: acp.PromptRequest, signal: AbortSignal): Promise<acp.PromptResponse> => {
    const session = deps.sessions.find(params.sessionId, id);
    if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
    const { message, images } = promptMessage(session.id, params.prompt);
    const turn: PromptTurn = { mapper: new UpdateMapper(), cancelled: false };
    session.turns.add(turn);
    for (const [ref, bytes] of images) deps.media.set(ref, bytes);
    // The client closing the connection (or cancelling the request itself) ends the turn.
    const onAbort = () => cancelSession(session, deps.stopConversation);
    signal.addEventListener("abort", onAbort, { once: true });
    deps.running.add(turn);
    try {
      // A cancel that arrived before the turn reached the queue found nothing to stop: stop it at its first event.
      const stream = new AcpTurnStream(turn.mapper, session.updates, () => {
        if (turn.cancelled) deps.stopConversation(session.conversation);
      });
      let fault: TurnFault | undefined;
      const outcome = await deps.ingest(message, {
        port: acpPort(session, turn, (ask, askSignal) => askEditor(session.id, ask, askSignal)),
        stream,
        onFault: (f) => {
          fault = f;
        },
      });
      // Every update of the turn reaches the client before its response does.
      await session.updates.idle();
      const cancelled = turn.cancelled || outcome === "cancelled" || outcome === "interrupted";
      log.debug("prompt done", { session: session.id, outcome });
      // A failed turn is a failed request: an editor can tell it from an answer (and may offer a retry).
      if (!cancelled && fault) throw new acp.RequestError(TURN_FAILED, fault.message, { class: fault.class });
      return { stopReason: cancelled ? "cancelled" : "end_turn" };
    } catch (error) {
      if (error instanceof acp.RequestError && error.code === TURN_FAILED) throw error;
      // The SDK answers the editor with an internal error; the log says what it was.
      log.error("prompt failed", { session: session.id, error: describeError(error) });
      throw error;
    } finally {
      deps.running.delete(turn);
      signal.removeEventListener("abort", onAbort);
      session.turns.delete(turn);
      for (const ref of images.keys()) deps.media.delete(ref);
    }
  };

  /** The editor's own permission dialog; whatever goes wrong (a client without it, a closed connection) counts as no answer. */
  let asked = 0;
  const askEditor = async (sessionId: string, ask: PermissionAsk, signal: AbortSignal): Promise<"allow" | "deny" | "cancelled"> => {
    try {
      const response = await connection.client.request(
        acp.methods.client.session.requestPermission,
        permissionRequest(sessionId, ask, `fermix-permission-${++asked}`),
        // Our wait ends (timeout, a stopped turn): tell the editor, and stop waiting for it.
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      if (response.outcome.outcome !== "selected") return "cancelled";
      return response.outcome.optionId === "allow" ? "allow" : "deny";
    } catch (error) {
      log.warn("the editor did not answer a permission request", { session: sessionId, error: describeError(error) });
      return "cancelled";
    }
  };

  const app = acp
    .agent({ name: "fermix" })
    .onRequest(acp.methods.agent.initialize, () => initializeResponse(deps.vision))
    .onRequest(acp.methods.agent.session.new, ({ params }) => {
      // ACP: "cwd must be an absolute path".
      if (typeof params.cwd !== "string" || !isAbsolute(params.cwd)) {
        throw acp.RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
      }
      const session = deps.sessions.open(id, params.cwd, (update, sessionId) =>
        connection.client.notify(acp.methods.client.session.update, { sessionId, update }),
      );
      log.debug("session opened", { session: session.id });
      return { sessionId: session.id };
    })
    .onRequest(acp.methods.agent.session.prompt, ({ params, signal }) => prompt(params, signal))
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const session = deps.sessions.find(params.sessionId, id);
      if (session) cancelSession(session, deps.stopConversation);
    });

  const connection = app.connect(acp.ndJsonStream(pipe.output, pipe.input));

  const dispose = () => {
    if (disposed) return;
    disposed = true;
    for (const session of deps.sessions.ownedBy(id)) {
      cancelSession(session, deps.stopConversation);
      deps.sessions.remove(session.id);
    }
    // Rejects what the SDK still waits for with "ACP connection closed"; every such promise is caught.
    connection.close();
  };
  // The SDK closes on its own when the input ends or a write fails.
  void connection.closed.then(dispose, dispose);

  return { id, pipe, dispose };
}
