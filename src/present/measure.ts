/**
 * Message length, and what the presentation layer needs to know of a
 * channel's text: its dialect, the most one message may hold, and how the
 * platform counts length. Each channel declares these in its profile
 * (src/channels/<name>/profile.ts); present/ never names a channel.
 * Counting UTF-16 units is the safe reading wherever a platform only says
 * "characters": it is never less than the number of code points.
 */
import type { Dialect } from "./dialects/base.ts";

/** Length of plain text in UTF-16 code units. */
export function utf16Length(text: string): number {
  return text.length;
}

/** A channel's text as the presentation layer sees it: dialect, limit and way of counting length. */
export interface TextProfile {
  readonly dialect: Dialect;
  /** The most a message may hold, as `measure` counts it; Infinity where any length goes. */
  readonly limit: number;
  measure(text: string): number;
}

/** The length of a message as the channel counts it; `plain` for text sent without markup. */
export function measureFor(profile: TextProfile, text: string, plain = false): number {
  return plain ? utf16Length(text) : profile.measure(text);
}
