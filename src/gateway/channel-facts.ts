/**
 * What the gateway knows of a channel: the facts it needs, read from the
 * channel's profile (src/channels/<name>/profile.ts) through a lookup the
 * composition root hands down. The gateway sits below the channels, so it
 * declares here the slice it reads and never names a channel itself.
 */
import type { ChannelMode, ChannelRequirements } from "../config/channels.ts";
import type { GatewayChannel } from "../message/index.ts";
import type { TextProfile } from "../present/measure.ts";

export interface ChannelFacts extends ChannelRequirements {
  readonly name: GatewayChannel;
  /** The channel's name in a sentence: "Telegram", "the editor", "the terminal". */
  readonly displayName: string;
  /** How it receives; null for the command line, which is no served channel. */
  readonly mode: ChannelMode | null;
  /** Dialect, message limit and way of counting length. */
  readonly text: TextProfile;
  /**
   * Its ports exist only while a client is connected (the command line, an
   * editor over ACP): nothing can be delivered there later, so nothing is
   * retried through it and a scheduled job made there needs another target.
   */
  readonly sessionOnly: boolean;
  /**
   * A surface on this machine whose user the OS has authorized (the file
   * mode of ACP's socket, the user running `fermix ask`): its sender is the
   * owner, with no allowlist.
   */
  readonly local: boolean;
  /** Whether a `/word` is a command here (an editor has none: it is text for the agent). */
  readonly commands: boolean;
  /**
   * How replies stream when the channel's `streaming` key is unset ("draft"
   * where it can edit, else "block"); null where the client shows the turn as
   * it happens itself (an editor) or prints every message for good (the
   * terminal): no streaming engine, no interim status message.
   */
  readonly streaming: "draft" | "block" | null;
  /**
   * Whether a chat is one-to-one, known from its ids alone: for a chat with
   * no message in hand (a scheduled job's target). A message carries the
   * adapter's own word instead (InboundMessage.direct).
   */
  isDirect(chat: { chatId: string; senderId: string }): boolean;
}

/** The facts of every channel, by name. */
export type ChannelLookup = (channel: GatewayChannel) => ChannelFacts;
