/**
 * Discord button presses, pure: an INTERACTION_CREATE `d` → the ButtonPress
 * the gateway answers, and that answer → the interaction callback body.
 * Total: whatever arrives comes back as a press, an interaction to
 * acknowledge and otherwise ignore, or invalid — never a throw.
 *
 * A press (type 3, message component, on a button) is mapped like the
 * messages of its chat (inbound.ts): in a guild, a thread's press belongs to
 * the thread's conversation (chat = the parent channel, thread = the
 * thread), known from the directory or from the interaction's own partial
 * `channel`; a press without `guild_id` comes from a DM. The presser is
 * `member.user` in a guild, `user` in a DM.
 *
 * The answer: while the buttons still serve, a reply only the presser sees
 * (type 4, flags EPHEMERAL); once they have served, the message itself is
 * updated (type 7): the buttons taken off and the outcome added under the
 * prompt, so everyone in the chat sees what was decided.
 */
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { APIInteractionResponse } from "discord-api-types/v10";
import type { ButtonPress, PressResult } from "../../message/index.ts";
import { DISCORD_TEXT_LIMIT } from "./outbound.ts";
import { ChannelType, ComponentType, InteractionResponseType, InteractionType, MessageFlags } from "./wire.ts";

/** What a callback needs: the interaction's id and its token (a credential for 15 minutes: never logged). */
export interface InteractionRef {
  id: string;
  token: string;
}

export type InteractionParseResult =
  | {
      kind: "press";
      interaction: InteractionRef;
      press: ButtonPress;
      /** The channel the button's message is in (the thread's id in a thread). */
      channelId: string;
      /** The prompt's current text, when the interaction carried it (to add the outcome under it). */
      content?: string;
    }
  | { kind: "ignored"; why: string; interaction?: InteractionRef }
  | { kind: "invalid" };

export interface InteractionParseOptions {
  /** The parent channel of a thread Fermix has heard of (directory.ts). */
  threadParent?: (channelId: string) => string | undefined;
}

const Snowflake = Type.String({ pattern: "^\\d{1,25}$" });
const User = Type.Object({ id: Snowflake });
const Interaction = Type.Object({
  id: Snowflake,
  type: Type.Number(),
  token: Type.String({ minLength: 1, maxLength: 1000 }),
});
// Only what the conversion reads; Discord adds fields freely and extra keys never make a payload invalid.
const ComponentPress = Type.Object({
  id: Snowflake,
  token: Type.String({ minLength: 1, maxLength: 1000 }),
  type: Type.Literal(InteractionType.MessageComponent),
  channel_id: Snowflake,
  guild_id: Type.Optional(Snowflake),
  channel: Type.Optional(Type.Object({ type: Type.Optional(Type.Number()), parent_id: Type.Optional(Type.Union([Snowflake, Type.Null()])) })),
  member: Type.Optional(Type.Object({ user: User })),
  user: Type.Optional(User),
  message: Type.Object({ id: Snowflake, content: Type.Optional(Type.String()) }),
  data: Type.Object({ custom_id: Type.String({ minLength: 1, maxLength: 100 }), component_type: Type.Number() }),
});

const THREAD_TYPES = new Set<number>([ChannelType.AnnouncementThread, ChannelType.PublicThread, ChannelType.PrivateThread]);

/** Convert one INTERACTION_CREATE `d`. */
export function parseInteraction(data: unknown, options: InteractionParseOptions = {}): InteractionParseResult {
  if (!Value.Check(Interaction, data)) return { kind: "invalid" };
  const interaction: InteractionRef = { id: data.id, token: data.token };
  // Fermix registers no commands: anything but a component press is acknowledged and left alone.
  if (data.type !== InteractionType.MessageComponent) return { kind: "ignored", why: `interaction type ${data.type}`, interaction };
  if (!Value.Check(ComponentPress, data))
    return { kind: "ignored", why: "a component interaction without its channel, message, presser or custom_id", interaction };
  if (data.data.component_type !== ComponentType.Button) return { kind: "ignored", why: `component type ${data.data.component_type}`, interaction };
  const presser = data.member?.user ?? data.user;
  if (!presser) return { kind: "ignored", why: "a press without its presser", interaction };

  const inGuild = data.guild_id !== undefined;
  const fromChannel =
    data.channel?.type !== undefined && THREAD_TYPES.has(data.channel.type) && typeof data.channel.parent_id === "string" ? data.channel.parent_id : undefined;
  const parent = inGuild ? (options.threadParent?.(data.channel_id) ?? fromChannel) : undefined;
  const press: ButtonPress = {
    channel: "discord",
    chatId: parent ?? data.channel_id,
    senderId: presser.id,
    messageId: data.message.id,
    data: data.data.custom_id,
    direct: !inGuild,
  };
  if (parent) press.threadId = data.channel_id;
  const result: InteractionParseResult = { kind: "press", interaction, press, channelId: data.channel_id };
  if (data.message.content !== undefined) result.content = data.message.content;
  return result;
}

/**
 * The callback for a press: an ephemeral reply with the answer while the
 * buttons still serve; once they have served, the message updated with the
 * buttons gone and the answer under the prompt (left as it was when the two
 * together would pass Discord's 2,000 characters or the prompt is unknown).
 */
export function pressCallback(answer: Pick<PressResult, "text" | "done">, prompt?: string): APIInteractionResponse {
  const text = answer.text.trim();
  if (!answer.done) {
    return { type: InteractionResponseType.ChannelMessageWithSource, data: { content: clip(text || "Noted."), flags: MessageFlags.Ephemeral } };
  }
  const updated = prompt !== undefined && text !== "" ? `${prompt}\n\n${text}` : undefined;
  return {
    type: InteractionResponseType.UpdateMessage,
    data: { components: [], ...(updated !== undefined && updated.length <= DISCORD_TEXT_LIMIT ? { content: updated } : {}) },
  };
}

/** An ephemeral line for an interaction Fermix does not act on (so the presser's client stops waiting). */
export function ignoredCallback(text: string): APIInteractionResponse {
  return { type: InteractionResponseType.ChannelMessageWithSource, data: { content: clip(text), flags: MessageFlags.Ephemeral } };
}

function clip(text: string): string {
  return text.length <= DISCORD_TEXT_LIMIT ? text : `${text.slice(0, DISCORD_TEXT_LIMIT - 1)}…`;
}
