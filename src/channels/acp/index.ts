/**
 * The ACP channel: editors that speak the Agent Client Protocol reach the
 * daemon through `<home>/acp.sock` (0600 in the 0700 home; `fermix acp`
 * bridges an editor's stdio to it). The socket's file mode is the
 * authorization: no owner id, no allowlist, no slash commands. Each ACP
 * session is its own conversation; replies stream as the model produces them.
 *
 * The ACP SDK (with zod and its hundreds of schemas: ~45 ms of start-up and
 * ~5 MB) is loaded when the first editor connects, not when the daemon
 * starts: most daemons never see an editor. Bytes an editor sends while it
 * loads are held and handed over in order.
 */
import { rmSync } from "node:fs";
import type { UnixSocketListener } from "bun";
import type { Config } from "../../config/schema.ts";
import { describeError } from "../../kernel/errors.ts";
import type { ChannelRuntimeState } from "../../kernel/health.ts";
import { listenUnix } from "../../kernel/unix-socket.ts";
import type { FetchedMedia, InboundMedia, ReplyPort, ReplyTarget } from "../../message/index.ts";
import type { AdapterContext, ChannelAdapter } from "../types.ts";
import { ACP_CAPABILITIES, acpPort, gonePort } from "./port.ts";
import { acpProfile } from "./profile.ts";
import type { AcpConnection, AcpServerDeps } from "./server.ts";
import { cancelSession, type PromptTurn, SessionRegistry } from "./session.ts";

/** Largest image an editor may attach to a prompt (src/channels/acp/profile.ts). */
const INBOUND_MEDIA_CAP = acpProfile.inboundMediaCap;
/** How long a stopping daemon lets cancelled prompts answer before it closes the connections. */
const STOP_GRACE_MS = 1000;

/** Whether the primary provider (the one marked primary; config marks a lone one) has vision. */
export function primaryVision(config: Config): boolean {
  const primary = Object.values(config.fermix_core.providers).find((p) => p.primary);
  return primary?.vision === true;
}

/** An accepted socket: its connection once the server module is loaded, until then what the editor sent. */
interface Accepted {
  connection: AcpConnection | undefined;
  early: Uint8Array[];
  closed: boolean;
}

let serverModule: Promise<typeof import("./server.ts")> | undefined;
/** The connection server and the SDK behind it, imported once, on first use. */
const loadServer = () => (serverModule ??= import("./server.ts"));

/** Live figures, for health and for tests that check a departed client left nothing behind. */
export interface AcpStats {
  connections: number;
  sessions: number;
  prompts: number;
  media: number;
}

/** The ACP channel adapter: listens on the socket, serves each connection, and answers for its sessions. */
export class AcpAdapter implements ChannelAdapter {
  readonly name = "acp" as const;
  readonly capabilities = ACP_CAPABILITIES;
  readonly inboundMediaCap = INBOUND_MEDIA_CAP;
  private readonly sessions = new SessionRegistry();
  private readonly media = new Map<string, FetchedMedia>();
  private readonly connections = new Set<AcpConnection>();
  private readonly running = new Set<PromptTurn>();
  private listener: UnixSocketListener<Accepted> | undefined;
  private context: AdapterContext | undefined;
  private path: string | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly config: Config) {}

  async start(context: AdapterContext): Promise<void> {
    // A failed start is followed by stop() and, later, a new start (the channel supervisor retries).
    this.stopping = undefined;
    this.context = context;
    this.path = context.paths.acpSocket;
    const deps: AcpServerDeps = {
      sessions: this.sessions,
      vision: primaryVision(this.config),
      ingest: context.ingest,
      stopConversation: context.stopConversation,
      media: this.media,
      running: this.running,
      log: context.log,
    };
    let ids = 0;
    const connections = this.connections;
    this.listener = await listenUnix<Accepted>(this.path, {
      open(socket) {
        const accepted: Accepted = { connection: undefined, early: [], closed: false };
        socket.data = accepted;
        const id = ++ids;
        loadServer().then(
          ({ serveConnection }) => {
            if (accepted.closed) return;
            const connection = serveConnection(socket, id, deps);
            accepted.connection = connection;
            connections.add(connection);
            for (const chunk of accepted.early.splice(0)) connection.pipe.onData(chunk);
          },
          (error: unknown) => {
            context.log.error("ACP could not be served", { error: describeError(error) });
            socket.end();
          },
        );
      },
      data(socket, chunk) {
        const { connection } = socket.data;
        // Held as a copy, in case the runtime reuses its read buffer.
        if (connection) connection.pipe.onData(chunk);
        else socket.data.early.push(new Uint8Array(chunk));
      },
      drain(socket) {
        socket.data.connection?.pipe.onDrain();
      },
      close(socket) {
        const accepted = socket.data;
        accepted.closed = true;
        accepted.early = [];
        const { connection } = accepted;
        if (!connection) return;
        connection.pipe.onClose();
        connection.dispose();
        connections.delete(connection);
      },
      error(_socket, error) {
        context.log.warn("ACP socket error", { error: error.message });
      },
    });
    context.log.info("ACP listening", { socket: this.path });
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  state(): ChannelRuntimeState {
    if (this.listener) return { status: "ready", process_alive: true };
    if (this.stopping) return { status: "failed", process_alive: false, detail: "stopped" };
    return { status: "starting", process_alive: false };
  }

  replyPort(target: ReplyTarget): ReplyPort {
    const session = this.sessions.find(target.chatId);
    return session ? acpPort(session) : gonePort(target.chatId);
  }

  async fetchMedia(media: InboundMedia): Promise<FetchedMedia> {
    // Only images of a running prompt exist: they came inline with it and are held in memory until it ends.
    const found = this.media.get(media.ref);
    if (!found) throw new Error("ACP attachments exist only while their prompt runs");
    return found;
  }

  stats(): AcpStats {
    return { connections: this.connections.size, sessions: this.sessions.size, prompts: this.running.size, media: this.media.size };
  }

  private async shutdown(): Promise<void> {
    const listener = this.listener;
    // Never started (or the start failed, e.g. another daemon owns the socket): nothing of ours to remove.
    if (!listener) return;
    // Answer running prompts `cancelled` while their clients are still there to read it.
    for (const session of this.sessions.all()) cancelSession(session, this.context!.stopConversation);
    const deadline = Date.now() + STOP_GRACE_MS;
    const answering = () => this.running.size > 0 || [...this.connections].some((c) => c.pipe.writing);
    while (answering() && Date.now() < deadline) await Bun.sleep(20);
    this.listener = undefined;
    listener.stop(true);
    for (const connection of [...this.connections]) connection.dispose();
    this.connections.clear();
    if (this.path) rmSync(this.path, { force: true });
  }
}

/** The registry's factory. */
export const acpAdapter = (config: Config): ChannelAdapter => new AcpAdapter(config);
