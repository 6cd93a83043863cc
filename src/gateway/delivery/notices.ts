/**
 * What the user is told when something could not be delivered, and what is
 * sent in a part's place: a file's text inline (a code block), or one line
 * naming what is missing. The wording is pure; `Notices` records it in the
 * outbox, each under its own key and purpose, for the caller to send.
 */
import type { GatewayChannel } from "../../message/index.ts";
import type { Outbox, OutboxPart, OutboxPayload, OutboxPurpose } from "../../store/outbox.ts";
import type { ChannelFacts } from "../channel-facts.ts";
import type { Presenter } from "./types.ts";

/** What a row of each purpose is, in a sentence about it ("I couldn't deliver …"). */
const WHAT: Readonly<Record<OutboxPurpose, string>> = {
  reply: "an answer",
  notice: "a message",
  background: "a background task's result",
  job: "a scheduled job's result",
  media: "an attachment",
  inline_fallback: "the text of a file",
  undelivered_notice: "a notice",
};

/** A reply that waited past the retry horizon: the user is told what it was, once the channel (`platform`, its name in a sentence) takes messages again. */
export function horizonNotice(purpose: OutboxPurpose, platform: string, waitedMinutes: number, about: string): string {
  return (
    `⚠️ I couldn't deliver ${WHAT[purpose]}: ${platform} was not taking messages for ${Math.max(1, waitedMinutes)} min.` +
    (about ? ` It began: “${about}”.` : "") +
    " Ask me again if you still need it."
  );
}

/** One message the platform (its name in a sentence) kept refusing while it took others, set aside so that later replies can go. */
export function setAsideNotice(purpose: OutboxPurpose, platform: string, about: string): string {
  return `⚠️ I couldn't deliver part of ${WHAT[purpose]}: ${platform} kept refusing it while it took other messages.${about ? ` It began: “${about}”.` : ""}`;
}

/** A file that could not be sent and has no text to send instead. */
export function fileNotSent(filename: string): string {
  return `⚠️ I couldn't send the file ${filename}.`;
}

/** The first words of a message, for saying what an undelivered one was about. */
export function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 80 ? `${flat.slice(0, 77).trimEnd()}…` : flat;
}

/** What a text part said, in a few words (its plain fallback when it has one); "" for a file. */
export function aboutPart(part: OutboxPart): string {
  return part.payload.kind === "text" ? preview(part.payload.fallback?.[0]?.text ?? part.payload.message.text) : "";
}

export class Notices {
  constructor(
    private readonly deps: {
      outbox: Outbox;
      presenter: Presenter;
      /** Each channel's name in a sentence (its profile). */
      channels: (channel: GatewayChannel) => Pick<ChannelFacts, "displayName">;
    },
  ) {}

  /**
   * Record what goes in the place of `part`, which will not be delivered: a
   * file's text inline (as plain messages), one line for a file without text
   * to send or for a text part set aside. Idempotent: recording it again
   * returns the same parts. Empty for a notice about something undelivered:
   * nobody is told about a notice.
   */
  instead(part: OutboxPart, why: "refused" | "set_aside"): OutboxPart[] {
    if (part.purpose === "undelivered_notice") return [];
    const key = `${part.replyKey}:instead${part.part}`;
    const payload = part.payload;
    if (payload.kind === "media" && payload.inline !== undefined) {
      const messages = this.deps.presenter.plain(`${payload.media.filename}:\n${payload.inline}`, part.channel);
      return this.recordText(
        key,
        part,
        messages.map((message) => ({ kind: "text", message })),
        "inline_fallback",
      );
    }
    const line =
      payload.kind === "media"
        ? fileNotSent(payload.media.filename)
        : why === "set_aside"
          ? setAsideNotice(part.purpose, this.deps.channels(part.channel).displayName, aboutPart(part))
          : "";
    if (line === "") return [];
    return this.recordText(key, part, this.markdown(line, part.channel), "undelivered_notice");
  }

  /** Record the notice that a reply waited past the horizon (`waitedMinutes`), about its first text part; nothing for a notice. */
  horizon(part: OutboxPart, first: OutboxPart | undefined, waitedMinutes: number): OutboxPart[] {
    if (part.purpose === "undelivered_notice" || !first) return [];
    const text = horizonNotice(first.purpose, this.deps.channels(part.channel).displayName, waitedMinutes, aboutPart(first));
    return this.recordText(`${part.replyKey}:undelivered`, part, this.markdown(text, part.channel), "undelivered_notice");
  }

  /** A Markdown line rendered for the channel, with the plain fallback of each message. */
  private markdown(text: string, channel: GatewayChannel): OutboxPayload[] {
    const rendered = this.deps.presenter.render(text, channel);
    return rendered.parts.map((message, i) => ({ kind: "text", message, fallback: rendered.fallback(i) }));
  }

  private recordText(key: string, about: OutboxPart, payloads: OutboxPayload[], purpose: OutboxPurpose): OutboxPart[] {
    return this.deps.outbox.record(key, about.channel, about.target, payloads, { firstPart: 0, purpose });
  }
}
