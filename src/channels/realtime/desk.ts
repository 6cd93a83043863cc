/**
 * The voice desk: who is connected and who is talking. Companions attach
 * (one per socket connection or /talk WebSocket) and are counted; one of
 * them at a time holds the owner's voice session. A second companion that
 * asks to start while one talks is refused with the reason (`busy`) and may
 * ask again once that session is over. The desk builds each session from
 * the config in force: the provider's settings, the owner's tools for a
 * voice turn (through the role table's one gate, `toolsForTurn`), and
 * instructions from SOUL.md and the memory the text turns use.
 *
 * Health reads `status()`: the counts, and the last fault of the provider
 * (it refused a session, or dropped one), cleared when a session is up again.
 */
import type { PromptSection, TurnRequest } from "../../agent/agent.ts";
import type { Tool, ToolContext } from "../../agent/tools/types.ts";
import type { RealtimeSettings } from "../../config/realtime.ts";
import type { ToolScope } from "../../gateway/deps.ts";
import type { Audience, RoleSources } from "../../gateway/roles.ts";
import { toolsForTurn } from "../../gateway/tools.ts";
import { faultLine } from "../../kernel/fault-line.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import { conversationKey, type PressResult } from "../../message/index.ts";
import type { MessageSender } from "../../message/untrusted.ts";
import type { ConversationStore } from "../../store/conversations.ts";
import type { IdempotencyStore } from "../../store/idempotency.ts";
import { SAMPLE_RATE } from "./pcm.ts";
import { realtimeProfile } from "./profile.ts";
import { type CompanionEvent, type CompanionRequest, PROTOCOL_VERSION, type TurnDetection } from "./protocol.ts";
import { noticePort, type SessionEnd, VoiceSession, type VoiceSessionDeps } from "./session.ts";
import { EARLIER_ROWS, voiceInstructions } from "./voice-prompt.ts";

/** The owner's voice conversation, `realtime:<owner>:`: its own history, apart from every chat's. */
export function voiceConversation(owner: string): string {
  return conversationKey({ channel: realtimeProfile.name, chatId: owner });
}

/** The role table's audience of a voice session: the owner, in their own direct conversation, in a `voice` turn. */
export const VOICE_AUDIENCE: Audience = { standing: "owner", direct: true, sharedToolsOn: false, mode: "voice" };

export interface VoiceDeskServices {
  /** The settings in force; undefined while realtime is off. */
  settings(): RealtimeSettings | undefined;
  /** The machine's own user: the owner on this surface. */
  owner(): string;
  conversations: Pick<ConversationStore, "append" | "latest">;
  /** SOUL.md as it is now. */
  soul(): string;
  /** The sections the text turns' instructions get (memory, skills), for a request. */
  sections(request: TurnRequest): PromptSection[];
  /** Tools the features offer a scope (workspace, memory, jobs, skills, the web, tool servers): what `toolsForTurn` filters. */
  extraTools(scope: ToolScope): Tool[];
  /** Each MCP server's roles in force (the role table's rule for its tools); absent: no server's tools are offered. */
  mcpRoles?: RoleSources["mcpRoles"];
  workspace: string;
  idempotency: IdempotencyStore;
  /** A notice's button pressed by the owner on the companion. */
  press(press: { senderId: string; chatId: string; data: string }): Promise<PressResult>;
  log: Logger;
  telemetry: Telemetry;
  /** The upstream connection (tests hand a fake's). */
  connect?: VoiceSessionDeps["connect"];
}

/** What a companion is, to the desk: a way to send it events and to close it. */
export interface Companion {
  send(event: CompanionEvent): void;
  close(): void;
}

/** A companion as attached: hand it what it asks; tell the desk when it goes. */
export interface CompanionLink {
  handle(request: CompanionRequest): void;
  detach(): void;
}

/** The live session, as `/tasks` and the status page show it. */
export interface LiveVoice {
  since: number;
  client: string;
  conversation: string;
}

export interface DeskStatus {
  activeSessions: number;
  activeClients: number;
  live: LiveVoice | null;
  /** The provider's last refusal or drop, as a page-safe line, until a session is up again. */
  fault?: string;
}

interface Held {
  session: VoiceSession;
  link: object;
  client: string;
  since: number;
}

export class VoiceDesk {
  private readonly clients = new Set<object>();
  private held: Held | undefined;
  private fault: string | undefined;

  constructor(private readonly services: VoiceDeskServices) {}

  status(): DeskStatus {
    const held = this.held;
    return {
      activeSessions: held ? 1 : 0,
      activeClients: this.clients.size,
      live: held?.session.live ? { since: held.since, client: held.client, conversation: this.conversation() } : null,
      ...(this.fault ? { fault: this.fault } : {}),
    };
  }

  /** The voice conversation of the owner: `realtime:<owner>:`. */
  conversation(): string {
    return voiceConversation(this.services.owner());
  }

  /** A companion connected: it is counted until it goes, and told the protocol and whether it may start. */
  attach(companion: Companion): CompanionLink {
    const link = {};
    this.clients.add(link);
    companion.send({
      type: "hello",
      protocol: PROTOCOL_VERSION,
      audio: { format: "pcm16", rate: SAMPLE_RATE, channels: 1 },
      enabled: this.services.settings() !== undefined,
    });
    return {
      handle: (request) => {
        if (request.type === "start") return void this.start(link, companion, request.turn_detection ?? "server", request.client ?? "a companion");
        if (this.held?.link === link) return this.held.session.handle(request);
        companion.send({ type: "error", code: "not_started", message: 'no voice session on this connection: send {"type":"start"} first' });
      },
      detach: () => {
        this.clients.delete(link);
        if (this.held?.link === link) this.held.session.end("companion_left");
      },
    };
  }

  /** End the live session, if any (shutdown, realtime turned off). */
  endAll(reason: "shutdown" | "disabled"): void {
    this.held?.session.end(reason);
  }

  private async start(link: object, companion: Companion, turnDetection: TurnDetection, client: string): Promise<void> {
    const { services } = this;
    const settings = services.settings();
    if (!settings) {
      companion.send({ type: "error", code: "disabled", message: "realtime voice is off: set [fermix_core.realtime] enabled = true (fermix setup offers it)" });
      return;
    }
    if (this.held) {
      const mine = this.held.link === link;
      companion.send({
        type: "error",
        code: mine ? "already_started" : "busy",
        message: mine
          ? "this connection's session is already running"
          : `a voice session is already live with ${this.held.client}: end it there first (one companion talks at a time)`,
      });
      return;
    }
    const owner = services.owner();
    const conversation = this.conversation();
    const sender: MessageSender = { id: owner, trusted: true };
    const channel = realtimeProfile.name;
    const scope: ToolScope = { channel, conversation, senderId: owner, role: "operator", audience: VOICE_AUDIENCE };
    // The one gate every turn's tools pass: what the role table offers the owner in a voice turn.
    const tools = toolsForTurn(scope, { extraTools: (s) => services.extraTools(s), ...(services.mcpRoles ? { mcpRoles: services.mcpRoles } : {}) }, false);
    const toolContext: Omit<ToolContext, "effects" | "signal" | "say" | "port"> = {
      channel,
      conversation,
      senderId: owner,
      role: "operator",
      target: { chatId: owner },
      workspace: services.workspace,
      idempotency: services.idempotency,
    };
    const instructions = (said: string) => {
      const request: TurnRequest = {
        conversation,
        channel,
        text: said,
        images: [],
        tools,
        toolContext: { ...toolContext, port: inertPort, say: async () => {} },
        signal: AbortSignal.abort(),
        sender,
      };
      return voiceInstructions({
        soul: services.soul(),
        now: new Date(),
        sections: services.sections(request),
        history: services.conversations.latest(conversation, EARLIER_ROWS),
        extra: settings.instructionsExtra,
      });
    };
    const since = Date.now();
    const session: VoiceSession = new VoiceSession({
      settings,
      turnDetection,
      conversation,
      owner: sender,
      instructions,
      tools,
      toolContext,
      history: services.conversations,
      press: (data) => services.press({ senderId: owner, chatId: owner, data }),
      emit: (event) => companion.send(event),
      ended: (end) => this.ended(session, end, since),
      log: services.log.child({ component: "realtime" }),
      ...(services.connect ? { connect: services.connect } : {}),
    });
    this.held = { session, link, client, since };
    if (await session.start()) {
      this.fault = undefined;
      services.telemetry.emit("realtime.session", { measurements: { duration_ms: 0 }, metadata: { channel, phase: "started", reason: client } });
    }
  }

  private ended(session: VoiceSession, end: SessionEnd, since: number): void {
    if (this.held?.session === session) this.held = undefined;
    const provider = this.services.settings()?.provider ?? "the provider";
    if (end.reason === "upstream_refused") this.fault = `provider ${provider} refused the session: ${faultLine(end.fault ?? { fault: "rejected" })}`;
    if (end.reason === "upstream_closed") this.fault = `provider ${provider} closed a live session${end.closeCode ? ` (code ${end.closeCode})` : ""}`;
    this.services.telemetry.emit("realtime.session", {
      measurements: { duration_ms: Date.now() - since },
      metadata: { channel: realtimeProfile.name, phase: "ended", reason: end.reason },
    });
  }
}

/** A port for building instructions only: sections never send anything. */
const inertPort = noticePort(async () => {});
