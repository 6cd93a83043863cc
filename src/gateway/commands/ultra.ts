/**
 * `/ultra <request>`: the request as a foreground turn in exhaustive
 * multi-agent (ultra) mode — planned into parts, worked on in parallel,
 * merged into one answer (see `agent/ultra/engine.ts`). Queued like any
 * message, so it waits its turn and `/stop` ends it. It declares the slice
 * of the command context it uses instead of importing it, so the command
 * list can import this file without a cycle.
 */

/** What `/ultra` needs of the command context. */
export interface UltraCommandContext {
  args: string;
  /** The message /ultra came in (its attachments: a voice note may be the whole request). */
  message: { media: readonly unknown[] };
  reply(markdown: string): Promise<void>;
  /** Present for a queued command where the gateway has ultra mode. */
  ultraTurn?(prompt: string): Promise<void>;
}

async function run(ctx: UltraCommandContext): Promise<void> {
  if (ctx.args === "" && ctx.message.media.length === 0) {
    await ctx.reply(
      "Usage: `/ultra <request>` — I split the request into independent parts, work on them in parallel and merge the results into one answer. It takes longer and uses more tokens than a normal reply; `/stop` ends it.",
    );
    return;
  }
  if (!ctx.ultraTurn) {
    await ctx.reply("Ultra mode is not available here.");
    return;
  }
  await ctx.ultraTurn(ctx.args);
}

export const ULTRA_COMMAND = {
  name: "ultra",
  aliases: [] as readonly string[],
  usage: "/ultra <request>",
  summary: "answer a request exhaustively: planned into parts, worked on in parallel, merged into one answer",
  operator: true,
  // A foreground turn: it waits for the turn before it, and /stop ends it.
  immediate: false,
  run,
};
