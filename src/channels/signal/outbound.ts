/**
 * The Signal reply port, over signal-cli's JSON-RPC methods: `send` for text
 * and files, `remoteDelete` for streaming cleanup, `sendReaction` with any
 * single emoji, `sendTyping`. A conversation is a person (`recipient`: their
 * UUID, or number when no UUID is known) or a group (`groupId`); see
 * inbound.ts for how chat and message ids are made.
 *
 * Text arrives already rendered in the plain-text Signal dialect, so there is
 * no formatting for Signal to reject, and signal-cli itself turns a text
 * past Signal's body limit into the long-text attachment the apps expect.
 * `notify: false` is Signal's "not urgent" flag (no push notification).
 * Signal messages cannot be edited through this port: streaming is block.
 */
import { mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { isSingleEmoji } from "../../kernel/emoji.ts";
import { formatMb, MB } from "../../kernel/sizes.ts";
import type { OutboundMedia, OutboundText, ReplyCapabilities, ReplyPort, ReplyTarget, SentMessage } from "../../message/index.ts";
import { GROUP_PREFIX, parseMessageId } from "./inbound.ts";
import { signalProfile } from "./profile.ts";

/** The media cap for Signal: Signal's own attachment limit. */
export const SIGNAL_MEDIA_CAP = 100 * MB;

export const SIGNAL_CAPABILITIES: ReplyCapabilities = signalProfile.capabilities;

/** How long each kind of request may take before it counts as failed, ms. */
export interface SignalTimeouts {
  /** A text message (default 60,000). */
  send: number;
  /** A message with a file of up to 100 MB to upload (default 600,000). */
  sendMedia: number;
  /** A reaction or a remote delete (default 30,000). */
  control: number;
  /** A typing indicator (default 10,000): late is useless. */
  typing: number;
}

export const DEFAULT_TIMEOUTS: SignalTimeouts = { send: 60_000, sendMedia: 600_000, control: 30_000, typing: 10_000 };

/** What the port needs of signal-cli: one request, answered or failed within `timeoutMs`. */
export interface SignalRequester {
  request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<unknown>;
}

/** Told when a file is not sent for being over the cap (the adapter counts it as a failed media reply). */
export type OverCapHook = (media: OutboundMedia, size: number) => void;

/** The JSON-RPC params that address a conversation: a group, or one person. */
export function destinationOf(chatId: string): { groupId: string } | { recipient: string[] } {
  return chatId.startsWith(GROUP_PREFIX) ? { groupId: chatId.slice(GROUP_PREFIX.length) } : { recipient: [chatId] };
}

/** The timestamp signal-cli gives a sent message: its id for deleting it later. */
function sentId(result: unknown, method: string): SentMessage {
  const timestamp = (result as { timestamp?: unknown } | null)?.timestamp;
  if (typeof timestamp !== "number" || !Number.isSafeInteger(timestamp)) throw new Error(`signal-cli ${method} returned no message timestamp`);
  return { id: String(timestamp) };
}

export interface SignalPortOptions {
  timeouts?: SignalTimeouts;
  onOverCap?: OverCapHook;
}

/** A reply port for one Signal conversation. */
export function signalReplyPort(rpc: SignalRequester, target: ReplyTarget, options: SignalPortOptions = {}): ReplyPort {
  const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS;
  const destination = destinationOf(target.chatId);
  const urgency = (notify: boolean) => (notify ? {} : { noUrgent: true });

  const sendText = async (message: OutboundText): Promise<SentMessage> =>
    sentId(await rpc.request("send", { ...destination, message: message.text, ...urgency(message.notify) }, timeouts.send), "send");

  return {
    capabilities: SIGNAL_CAPABILITIES,
    sendText,
    async editText() {
      throw new Error("Signal messages are not edited by Fermix (capabilities say so)");
    },
    async deleteMessage(sent) {
      const targetTimestamp = Number(sent.id);
      if (!Number.isSafeInteger(targetTimestamp)) throw new Error(`not a Signal message id: ${sent.id}`);
      await rpc.request("remoteDelete", { ...destination, targetTimestamp }, timeouts.control);
    },
    async react(messageId, emoji) {
      const chosen = emoji.trim();
      if (!isSingleEmoji(chosen)) throw new Error(`a Signal reaction is one emoji; "${emoji}" is not`);
      const message = parseMessageId(messageId);
      if (!message) throw new Error(`not a Signal message id: ${messageId}`);
      await rpc.request("sendReaction", { ...destination, emoji: chosen, targetAuthor: message.author, targetTimestamp: message.timestamp }, timeouts.control);
    },
    async sendMedia(media: OutboundMedia) {
      const size = statSync(media.path).size;
      if (size > SIGNAL_MEDIA_CAP) {
        options.onOverCap?.(media, size);
        // Never a silent drop: the user hears which file did not come and why.
        const note = `📎 ${media.filename} is ${formatMb(size)}, over Signal's ${formatMb(SIGNAL_MEDIA_CAP)} limit for attachments, so it was not sent.`;
        return sendText({ text: note, notify: media.notify, linkPreview: false, plain: true });
      }
      return withFileName(media, async (path) =>
        sentId(
          await rpc.request(
            "send",
            { ...destination, message: media.caption?.trim() ?? "", attachments: [path], ...urgency(media.notify) },
            timeouts.sendMedia,
          ),
          "send",
        ),
      );
    },
    async typing() {
      await rpc.request("sendTyping", { ...destination }, timeouts.typing);
    },
  };
}

/**
 * signal-cli names an attachment after the file it reads. When the file on
 * disk is called something else (a spooled "0-notes.txt"), it is offered
 * through a symlink with the right name in a private temporary folder,
 * removed once signal-cli has answered: no copy of a 100 MB file.
 */
async function withFileName<T>(media: OutboundMedia, send: (path: string) => Promise<T>): Promise<T> {
  const path = resolve(media.path);
  const wanted = basename(media.filename);
  if (!wanted || wanted === basename(path) || wanted === "." || wanted === "..") return send(path);
  const dir = mkdtempSync(join(tmpdir(), "fermix-signal-"));
  try {
    const link = join(dir, wanted);
    symlinkSync(path, link);
    return await send(link);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
