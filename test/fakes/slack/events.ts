/**
 * Realistic Slack Events API bodies (`type: "event_callback"`) for tests of
 * the webhook side: the envelope fields bolt-js's EnvelopedEvent lists, and
 * message / app_mention / file_share events shaped like real payloads
 * (rich_text blocks, client_msg_id, channel_type). Only the JSON: signing
 * the body is the caller's job.
 */

export interface SlackFile {
  id: string;
  created: number;
  timestamp: number;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  pretty_type: string;
  user: string;
  user_team: string;
  editable: boolean;
  size: number;
  mode: "hosted";
  is_external: boolean;
  external_type: string;
  is_public: boolean;
  public_url_shared: boolean;
  display_as_bot: boolean;
  username: string;
  url_private: string;
  url_private_download: string;
  permalink: string;
  permalink_public: string;
  is_starred: boolean;
  has_rich_preview: boolean;
  file_access: string;
  original_w?: number;
  original_h?: number;
  thumb_360?: string;
}

export interface EventContext {
  teamId: string;
  appId: string;
  botUserId: string;
  /** A fresh, increasing Slack ts ("1700000000.000100"). */
  nextTs(): string;
  /** Register a user-authored message so the fake can thread, react to and look it up. */
  recordInbound(channel: string, event: Record<string, unknown>): void;
}

/** A default human. */
export const SLACK_ALICE = "U0ALICE0001";
export const SLACK_DM = "D0DMALICE01";
export const SLACK_CHANNEL = "C0GENERAL01";

const FILETYPE: Record<string, [string, string]> = {
  txt: ["text", "Plain Text"],
  md: ["markdown", "Markdown (raw)"],
  pdf: ["pdf", "PDF"],
  png: ["png", "PNG"],
  jpg: ["jpg", "JPEG"],
  jpeg: ["jpg", "JPEG"],
  gif: ["gif", "GIF"],
  mp3: ["mp3", "MP3"],
  m4a: ["m4a", "MPEG 4 Audio"],
  ogg: ["ogg", "Ogg Vorbis"],
  webm: ["webm", "WebM"],
  mp4: ["mp4", "MPEG 4 Video"],
  csv: ["csv", "CSV"],
  json: ["json", "JSON"],
};

/** Slack's filetype / pretty_type for a file name. */
export function fileTypeOf(name: string): { filetype: string; pretty_type: string } {
  const [filetype, pretty_type] = FILETYPE[name.split(".").pop()?.toLowerCase() ?? ""] ?? ["binary", "Binary"];
  return { filetype, pretty_type };
}

/** The rich_text block every modern client attaches to a typed message. */
function richText(text: string): unknown[] {
  const elements: unknown[] = [];
  for (const part of text.split(/(<@[A-Z0-9]+>)/)) {
    if (!part) continue;
    const mention = /^<@([A-Z0-9]+)>$/.exec(part);
    elements.push(mention ? { type: "user", user_id: mention[1] } : { type: "text", text: part });
  }
  return [{ type: "rich_text", block_id: randomId(5), elements: [{ type: "rich_text_section", elements }] }];
}

function randomId(n: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  return Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join("");
}

export interface MessageOpts {
  user?: string;
  channel?: string;
  /** Reply in this thread (the parent's ts). */
  thread_ts?: string;
  ts?: string;
}

export class SlackEventBuilder {
  constructor(private readonly ctx: EventContext) {}

  /** Wrap an inner event in the event_callback envelope. */
  envelope(event: Record<string, unknown>): Record<string, unknown> {
    const { teamId, appId, botUserId } = this.ctx;
    const channel = typeof event.channel === "string" ? event.channel : "";
    const context = Buffer.from(JSON.stringify({ et: event.type, tid: teamId, aid: appId, cid: channel })).toString("base64url");
    return {
      token: "fermixVerificationTokenXX",
      team_id: teamId,
      context_team_id: teamId,
      context_enterprise_id: null,
      api_app_id: appId,
      event,
      type: "event_callback",
      event_id: `Ev0${randomId(9)}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ enterprise_id: null, team_id: teamId, user_id: botUserId, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      event_context: `4-${context}`,
    };
  }

  private message(text: string, o: MessageOpts, channelType: string, defaultChannel: string): Record<string, unknown> {
    const ts = o.ts ?? this.ctx.nextTs();
    const channel = o.channel ?? defaultChannel;
    const user = o.user ?? SLACK_ALICE;
    const event: Record<string, unknown> = {
      client_msg_id: crypto.randomUUID(),
      type: "message",
      text,
      user,
      ts,
      blocks: richText(text),
      team: this.ctx.teamId,
    };
    if (o.thread_ts) Object.assign(event, { thread_ts: o.thread_ts, parent_user_id: user });
    Object.assign(event, { channel, event_ts: ts, channel_type: channelType });
    this.ctx.recordInbound(channel, event);
    return this.envelope(event);
  }

  /** A direct message to the bot (channel_type "im"). */
  dm(text: string, o: MessageOpts = {}): Record<string, unknown> {
    return this.message(text, o, "im", SLACK_DM);
  }

  /** A message in a public channel the bot is in. */
  channelMessage(text: string, o: MessageOpts = {}): Record<string, unknown> {
    return this.message(text, o, "channel", SLACK_CHANNEL);
  }

  /** A reply in a thread (defaults to the public channel). */
  threadReply(text: string, thread_ts: string, o: MessageOpts = {}): Record<string, unknown> {
    return this.message(text, { ...o, thread_ts }, o.channel?.startsWith("D") ? "im" : "channel", SLACK_CHANNEL);
  }

  /** `@bot …` in a channel: an app_mention event (no channel_type, text carries `<@BOTID>`). */
  appMention(text: string, o: MessageOpts = {}): Record<string, unknown> {
    const ts = o.ts ?? this.ctx.nextTs();
    const channel = o.channel ?? SLACK_CHANNEL;
    const full = `<@${this.ctx.botUserId}> ${text}`;
    const event: Record<string, unknown> = {
      client_msg_id: crypto.randomUUID(),
      type: "app_mention",
      text: full,
      user: o.user ?? SLACK_ALICE,
      ts,
      blocks: richText(full),
      team: this.ctx.teamId,
      channel,
      event_ts: ts,
    };
    if (o.thread_ts) event.thread_ts = o.thread_ts;
    this.ctx.recordInbound(channel, event);
    return this.envelope(event);
  }

  /** A message with files attached (subtype file_share); `files` come from `fake.addFile`. */
  fileShare(files: SlackFile[], text = "", o: MessageOpts & { channel_type?: string } = {}): Record<string, unknown> {
    const ts = o.ts ?? this.ctx.nextTs();
    const channel = o.channel ?? SLACK_DM;
    const event: Record<string, unknown> = {
      type: "message",
      subtype: "file_share",
      text,
      files,
      upload: true,
      user: o.user ?? SLACK_ALICE,
      display_as_bot: false,
      ts,
      blocks: text ? richText(text) : undefined,
      client_msg_id: crypto.randomUUID(),
      channel,
      event_ts: ts,
      channel_type: o.channel_type ?? (channel.startsWith("D") ? "im" : "channel"),
    };
    if (o.thread_ts) Object.assign(event, { thread_ts: o.thread_ts, parent_user_id: event.user });
    if (!text) delete event.blocks;
    this.ctx.recordInbound(channel, event);
    return this.envelope(event);
  }
}
