/**
 * Message length as each platform counts it, and each channel's limit.
 * Telegram counts the text after entity parsing (tags are free, an entity is
 * one character) in UTF-16 code units; the others count the text as sent.
 * Counting UTF-16 units is the safe reading wherever a platform only says
 * "characters": it is never less than the number of code points.
 */
import type { GatewayChannel } from "../message/index.ts";
import type { DialectName } from "./dialects/base.ts";
import { decodeEntity, ENTITY } from "./text.ts";

/** Length of plain text in UTF-16 code units. */
export function utf16Length(text: string): number {
  return text.length;
}

/** Length of Telegram HTML after entity parsing: tags do not count, an entity counts as what it stands for. */
export function telegramLength(html: string): number {
  let length = 0;
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    const amp = html.indexOf("&", i);
    const next = lt === -1 ? amp : amp === -1 ? lt : Math.min(lt, amp);
    if (next === -1) return length + (html.length - i);
    length += next - i;
    if (next === lt) {
      const gt = html.indexOf(">", lt);
      i = gt === -1 ? html.length : gt + 1;
      continue;
    }
    const m = ENTITY.exec(html.slice(amp, amp + 40));
    const decoded = m ? decodeEntity(m[0]) : undefined;
    length += decoded?.length ?? 1;
    i = amp + (m && decoded !== undefined ? m[0].length : 1);
  }
  return length;
}

/** A channel's dialect, limit and way of counting length. */
export interface Platform {
  dialect: DialectName;
  /** The most a message may hold, as `measure` counts it. */
  limit: number;
  measure(text: string): number;
}

/**
 * Limits per channel. Signal has no cap but long texts still split for
 * readability at WhatsApp's size; ACP and the CLI take any length and read
 * Markdown, so they get Discord's dialect without a limit.
 */
export const PLATFORMS: Readonly<Record<GatewayChannel, Platform>> = {
  telegram: { dialect: "telegram", limit: 4096, measure: telegramLength },
  discord: { dialect: "discord", limit: 2000, measure: utf16Length },
  slack: { dialect: "slack", limit: 40_000, measure: utf16Length },
  whatsapp: { dialect: "whatsapp", limit: 4096, measure: utf16Length },
  signal: { dialect: "signal", limit: 4096, measure: utf16Length },
  acp: { dialect: "discord", limit: Number.POSITIVE_INFINITY, measure: utf16Length },
  cli: { dialect: "discord", limit: Number.POSITIVE_INFINITY, measure: utf16Length },
};

/** The length of a message as `channel` counts it; `plain` for text sent without markup. */
export function measureFor(channel: GatewayChannel, text: string, plain = false): number {
  return plain ? utf16Length(text) : PLATFORMS[channel].measure(text);
}
