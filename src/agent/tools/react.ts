/** `react {"emoji": "<one emoji>"}`: acknowledge the message with a reaction instead of a text reply. */
import { Type } from "@sinclair/typebox";
import { isSingleEmoji } from "../../kernel/emoji.ts";
import type { ReplyCapabilities } from "../../message/index.ts";
import { StringEnum } from "./arguments.ts";
import { defineTool, type Tool, ToolError } from "./types.ts";

/** The react tool for a channel, or null when the channel has no reactions. */
export function reactTool(capability: ReplyCapabilities["react"]): Tool | null {
  if (capability === false) return null;
  const fixed = capability === "any" ? null : capability;
  const description = fixed
    ? `React to the user's message with one of these, instead of sending a text reply, when the message only needs acknowledging: ${fixed.join(" ")}. Anything that needs a real answer still gets one.`
    : "React to the user's message with one emoji, instead of sending a text reply, when the message only needs acknowledging (ok, thanks, a thumbs-up). Anything that needs a real answer still gets one.";
  return defineTool({
    name: "react",
    description,
    parameters: Type.Object({ emoji: fixed ? StringEnum(fixed) : Type.String({ description: "one emoji" }) }, { additionalProperties: false }),
    async run(args, ctx) {
      const emoji = args.emoji.trim();
      if (!fixed && !isSingleEmoji(emoji)) throw new ToolError("emoji must be exactly one emoji");
      if (!ctx.target.replyTo) throw new ToolError("there is no message to react to");
      await ctx.port.react(ctx.target.replyTo, emoji);
      ctx.effects.reacted = true;
      return `reacted with ${emoji}`;
    },
  });
}
