/**
 * Buttons and their presses in the Discord fake, as Discord documents them
 * ("Message Components", "Receiving and Responding"): a bot's message may
 * carry action rows of buttons (checked here: at most five rows of five, a
 * non-link button with a `custom_id` of at most 100 characters, unique in
 * the message, a label of at most 80); a person's tap becomes an
 * INTERACTION_CREATE (type 3, MESSAGE_COMPONENT) with a fresh id and token,
 * and the bot must answer it once, within three seconds, with `POST
 * /interactions/{id}/{token}/callback` — no bot token needed, the
 * interaction's own token is in the path. Answers: type 4 (a message;
 * with flags 64 only the presser sees it), 5 and 6 (deferred), 7 (update
 * the message the button is on). An unknown or expired interaction is 404
 * (10062), a second answer 400 (40060).
 */
import {
  type APIMessage,
  type APIMessageComponentInteraction,
  type APIUser,
  ButtonStyle,
  ChannelType,
  ComponentType,
  InteractionResponseType,
  InteractionType,
  Locale,
  MessageFlags,
} from "discord-api-types/v10";
import type { RecordedRequest } from "../recorder.ts";
import { DISCORD_BOT, DISCORD_CHANNEL, DISCORD_GUILD, DISCORD_THREAD, type Snowflakes } from "./builders.ts";

/** One press, and what the bot answered. */
export interface FakeInteraction {
  id: string;
  token: string;
  messageId: string;
  channelId: string;
  guildId?: string;
  user: APIUser;
  customId: string;
  createdAt: number;
  /** The accepted answer (`type` and `data` as sent), once there is one. */
  answer?: { type: number; data?: Record<string, unknown>; at: number };
}

/** A button as a person sees it under a message. */
export interface FakeButton {
  label?: string;
  style: number;
  customId?: string;
}

type Answer = { status: number; body?: unknown };

const formError = (field: string, code: string, message: string): Answer => ({
  status: 400,
  body: { message: "Invalid Form Body", code: 50035, errors: { [field]: { _errors: [{ code, message }] } } },
});

/** Check a message's `components` the way Discord does; null when they are fine. */
export function componentsError(components: unknown): Answer | null {
  if (components === undefined) return null;
  if (!Array.isArray(components)) return formError("components", "MODEL_TYPE_CONVERT", "Only iterables may be used in a ListType");
  if (components.length > 5) return formError("components", "BASE_TYPE_BAD_LENGTH", "Must be between 0 and 5 in length.");
  const ids = new Set<string>();
  for (const row of components as Array<Record<string, unknown>>) {
    if (row?.type !== ComponentType.ActionRow || !Array.isArray(row.components))
      return formError("components", "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).');
    if (row.components.length < 1 || row.components.length > 5) return formError("components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.");
    for (const button of row.components as Array<Record<string, unknown>>) {
      if (button?.type !== ComponentType.Button)
        return formError("components", "COMPONENT_TYPE_INVALID", "The specified component type is invalid in this context");
      const style = button.style;
      if (typeof style !== "number" || style < ButtonStyle.Primary || style > ButtonStyle.Premium)
        return formError("components", "BUTTON_STYLE_INVALID", "Invalid button style");
      if (typeof button.label === "string" && button.label.length > 80)
        return formError("components", "BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length.");
      if (style === ButtonStyle.Link) {
        if (typeof button.url !== "string") return formError("components", "BUTTON_COMPONENT_URL_REQUIRED", "A url is required");
        continue;
      }
      const id = button.custom_id;
      if (typeof id !== "string" || id.length < 1) return formError("components", "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED", "A custom id is required");
      if (id.length > 100) return formError("components", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.");
      if (ids.has(id)) return formError("components", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated");
      ids.add(id);
    }
  }
  return null;
}

/** The buttons of a message's components, in order. */
export function buttonsOf(components: unknown): FakeButton[] {
  if (!Array.isArray(components)) return [];
  return (components as Array<{ components?: Array<Record<string, unknown>> }>).flatMap((row) =>
    (row.components ?? []).map((b) => ({
      style: Number(b.style),
      ...(typeof b.label === "string" ? { label: b.label } : {}),
      ...(typeof b.custom_id === "string" ? { customId: b.custom_id } : {}),
    })),
  );
}

/** What the fake needs of the message store. */
export interface MessageAccess {
  /** The bot's message as the API returns it (components included), or undefined. */
  apiMessage(channelId: string, messageId: string): APIMessage | undefined;
  /** Update a message as an interaction answer of type 7 does. */
  update(channelId: string, messageId: string, data: Record<string, unknown>): Answer | null;
  /** Post a message in a channel (a non-ephemeral type 4 answer). */
  post(channelId: string, content: string): void;
}

export class FakeInteractions {
  readonly all: FakeInteraction[] = [];
  /** How long an interaction may wait for its first answer (Discord: three seconds). */
  deadlineMs = 3000;

  constructor(
    private readonly ids: Snowflakes,
    private readonly messages: MessageAccess,
  ) {}

  /**
   * A person taps a button on one of the bot's messages: the interaction is
   * recorded and its INTERACTION_CREATE `d` returned for the gateway to send.
   */
  press(
    channelId: string,
    messageId: string,
    o: { user: APIUser; customId?: string; guildId?: string },
  ): { interaction: FakeInteraction; d: APIMessageComponentInteraction } {
    const message = this.messages.apiMessage(channelId, messageId);
    if (!message) throw new Error(`no bot message ${messageId} in channel ${channelId} to press a button on`);
    const buttons = buttonsOf(message.components);
    const customId = o.customId ?? buttons.find((b) => b.customId)?.customId;
    if (customId === undefined || !buttons.some((b) => b.customId === customId))
      throw new Error(`message ${messageId} has no button with custom_id ${customId}`);
    const guildId = o.guildId ?? (channelId === DISCORD_CHANNEL || channelId === DISCORD_THREAD ? DISCORD_GUILD : undefined);
    const interaction: FakeInteraction = {
      id: this.ids.next(),
      token: `aW50ZXJhY3Rpb24${crypto.randomUUID().replace(/-/g, "")}${crypto.randomUUID().replace(/-/g, "")}`,
      messageId,
      channelId,
      user: o.user,
      customId,
      createdAt: Date.now(),
      ...(guildId ? { guildId } : {}),
    };
    this.all.push(interaction);
    return { interaction, d: interactionCreate(interaction, message) };
  }

  find(id: string): FakeInteraction | undefined {
    return this.all.find((i) => i.id === id);
  }

  /** `POST /interactions/{id}/{token}/callback`. */
  callback(id: string, token: string, record: RecordedRequest): Answer {
    const interaction = this.find(id);
    const unknown: Answer = { status: 404, body: { message: "Unknown interaction", code: 10062 } };
    if (!interaction || interaction.token !== token) return unknown;
    if (interaction.answer) return { status: 400, body: { message: "Interaction has already been acknowledged.", code: 40060 } };
    if (Date.now() - interaction.createdAt > this.deadlineMs) return unknown;
    const type = record.body.type;
    const data = (record.body.data ?? undefined) as Record<string, unknown> | undefined;
    switch (type) {
      case InteractionResponseType.ChannelMessageWithSource: {
        const content = typeof data?.content === "string" ? data.content : "";
        if (content === "") return { status: 400, body: { message: "Cannot send an empty message", code: 50006 } };
        if (content.length > 2000) return formError("data.content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.");
        const flags = typeof data?.flags === "number" ? data.flags : 0;
        const allowed = MessageFlags.Ephemeral | MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications;
        if ((flags & ~allowed) !== 0) return formError("data.flags", "MESSAGE_FLAGS_INVALID", "Invalid flags");
        if ((flags & MessageFlags.Ephemeral) === 0) this.messages.post(interaction.channelId, content);
        break;
      }
      case InteractionResponseType.DeferredChannelMessageWithSource:
      case InteractionResponseType.DeferredMessageUpdate:
        break;
      case InteractionResponseType.UpdateMessage: {
        const refused = this.messages.update(interaction.channelId, interaction.messageId, data ?? {});
        if (refused) return refused;
        break;
      }
      default:
        return formError("type", "BASE_TYPE_CHOICES", "Value must be one of {4, 5, 6, 7, 9, 10, 12}.");
    }
    interaction.answer = { type, ...(data ? { data } : {}), at: Date.now() };
    return { status: 204 };
  }
}

/** The INTERACTION_CREATE `d` for a press: a guild interaction (member) or a DM one (user), as Discord sends them. */
export function interactionCreate(i: FakeInteraction, message: APIMessage): APIMessageComponentInteraction {
  const channel =
    i.channelId === DISCORD_THREAD
      ? { id: i.channelId, type: ChannelType.PublicThread, parent_id: DISCORD_CHANNEL, guild_id: DISCORD_GUILD }
      : i.guildId
        ? { id: i.channelId, type: ChannelType.GuildText, guild_id: i.guildId }
        : { id: i.channelId, type: ChannelType.DM };
  const base = {
    id: i.id,
    application_id: DISCORD_BOT.id,
    type: InteractionType.MessageComponent,
    data: { custom_id: i.customId, component_type: ComponentType.Button },
    channel,
    channel_id: i.channelId,
    token: i.token,
    version: 1,
    message,
    app_permissions: "562949953421311",
    locale: Locale.EnglishUS,
    entitlements: [],
    authorizing_integration_owners: { 0: i.guildId ?? "0" },
    context: i.guildId ? 0 : 1,
    attachment_size_limit: 10 * 1024 * 1024,
  };
  if (!i.guildId) return { ...base, user: i.user } as unknown as APIMessageComponentInteraction;
  return {
    ...base,
    guild_id: i.guildId,
    guild: { id: i.guildId, features: [], locale: Locale.EnglishUS },
    guild_locale: Locale.EnglishUS,
    member: { user: i.user, roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0, permissions: "1071698660929" },
  } as unknown as APIMessageComponentInteraction;
}
