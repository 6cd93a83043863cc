/**
 * The one interface every channel adapter implements, and what the daemon
 * hands each adapter when it starts. Adapters turn what their platform
 * delivers into InboundMessages and submit them; they build reply ports on
 * request; nothing else about them is known to the core.
 */
import type { Paths } from "../config/paths.ts";
import type { Config } from "../config/schema.ts";
import type { ChannelRuntimeState } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type {
  ButtonPress,
  FetchedMedia,
  PressResult,
  Submission,
  SubmitResult,
  GatewayChannel,
  InboundMedia,
  InboundMessage,
  ReplyCapabilities,
  ReplyPort,
  ReplyTarget,
} from "../message/index.ts";
import type { Database } from "bun:sqlite";
import type { IngestOptions, IngestOutcome } from "../gateway/ingest.ts";

export interface AdapterContext {
  config: Config;
  /** Where Fermix keeps its files: local-socket channels listen under the home (ACP: `acpSocket`). */
  paths: Paths;
  db: Database;
  log: Logger;
  telemetry: Telemetry;
  /**
   * Hand messages to the gateway: committed to the durable inbox (with their
   * idempotency keys) before this resolves, then processed. `commit` runs in
   * the same transaction — a polling channel stores its new cursor there.
   * Throws HandoffUnavailable when the daemon is at capacity.
   */
  submit(items: Submission[], commit?: () => void): Promise<SubmitResult>;
  /**
   * Run one message straight through the gateway and wait for its turn: for
   * surfaces whose acknowledgement is the end of the turn itself (an ACP
   * prompt's response), with their own port and streaming sink.
   */
  ingest(message: InboundMessage, options: IngestOptions): Promise<IngestOutcome>;
  /**
   * Stop one conversation now, as /stop does: cancel its running turn and drop
   * its queued ones (`key` is conversationKey(message)). For surfaces with no
   * slash commands whose protocol has its own cancel (ACP session/cancel).
   */
  stopConversation(key: string): void;
  /**
   * Someone tapped one of our buttons (ReplyCapabilities.buttons): hand the
   * press over as it came, at once — never through the inbox or behind a
   * turn. Resolves with a short answer for the presser alone and whether the
   * buttons have served (the adapter may then take them off the message).
   * Absent where nothing answers presses.
   *
   * A button channel: sets `capabilities.buttons`, renders OutboundText.buttons
   * under the message with each button's `data` as the platform's callback id,
   * and maps a tap to a ButtonPress whose chatId/threadId are what its
   * messages get (so the conversation key matches), `direct` for a DM.
   * Telegram: callback_query → answerCallbackQuery. Discord: INTERACTION_CREATE
   * type 3 → press({ channel: "discord", chatId, threadId, senderId:
   * (member?.user ?? user).id, messageId: message.id, data: data.custom_id,
   * direct: guild_id === undefined }), then the interaction callback: type 4
   * with flags 64 (ephemeral) and content = text, or type 7 with components []
   * once `done`.
   */
  press?(press: ButtonPress): Promise<PressResult>;
}

export interface ChannelAdapter {
  readonly name: GatewayChannel;
  readonly capabilities: ReplyCapabilities;
  /** Largest inbound attachment this channel downloads, in bytes. */
  readonly inboundMediaCap: number;
  /** Start receiving (a poller, a socket); webhook channels have nothing to start. */
  start(context: AdapterContext): Promise<void>;
  stop(): Promise<void>;
  state(): ChannelRuntimeState;
  replyPort(target: ReplyTarget): ReplyPort;
  /**
   * Download one inbound attachment, after authorization. `maxBytes` lowers the
   * channel's own cap for this download (transcription's `max_file_mb`): over
   * it, rejects with MediaTooLarge — before the download where the platform
   * tells the size first.
   */
  fetchMedia(media: InboundMedia, signal?: AbortSignal, maxBytes?: number): Promise<FetchedMedia>;
}

