/** `react {"emoji": "<one emoji>"}`: acknowledge the message with a reaction instead of a text reply. */
import { isSingleEmoji } from "../../kernel/emoji.ts";
import type { ReplyCapabilities } from "../../message/index.ts";
import { type Tool, ToolError } from "./types.ts";


/** The react tool for a channel, or null when the channel has no reactions. */
export function reactTool(capability: ReplyCapabilities["react"]): Tool | null {
  if (capability === false) return null;
  const fixed = capability === "any" ? null : capability;
  const description = fixed
    ? `React to the user's message with one of these, instead of sending a text reply, when the message only needs acknowledging: ${fixed.join(" ")}. Anything that needs a real answer still gets one.`
    : "React to the user's message with one emoji, instead of sending a text reply, when the message only needs acknowledging (ok, thanks, a thumbs-up). Anything that needs a real answer still gets one.";
  return {
    spec: {
      name: "react",
      description,
      parameters: {
        type: "object",
        properties: { emoji: fixed ? { type: "string", enum: [...fixed] } : { type: "string", description: "one emoji" } },
        required: ["emoji"],
        additionalProperties: false,
      },
    },
    async run(args, ctx) {
      const emoji = typeof args.emoji === "string" ? args.emoji.trim() : "";
      if (fixed ? !fixed.includes(emoji) : !isSingleEmoji(emoji)) {
        throw new ToolError(fixed ? `not allowed here; use one of: ${fixed.join(" ")}` : "emoji must be exactly one emoji");
      }
      if (!ctx.target.replyTo) throw new ToolError("there is no message to react to");
      await ctx.port.react(ctx.target.replyTo, emoji);
      ctx.effects.reacted = true;
      return `reacted with ${emoji}`;
    },
  };
}
