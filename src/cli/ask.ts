/** `fermix ask "<text>"`: one turn, the reply on stdout. */
import { type CliContext, UsageError } from "./context.ts";
import { renderEvent, spinner } from "./render.ts";
import { openSession } from "./session.ts";

export async function main(args: string[], ctx: CliContext): Promise<number> {
  const text = args.join(" ").trim();
  if (text === "") throw new UsageError('nothing to ask: fermix ask "<text>"');
  const session = await openSession(ctx.env);
  // NO_COLOR turns off colour, not the progress indicator (the spinner has no colour in it).
  const colors = !ctx.env.NO_COLOR;
  let stopSpinner = spinner(ctx.stderr, ctx.isTTY);
  const onAbort = () => session.stop();
  ctx.shutdown.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await session.turn(text, (event) => {
      const shown = renderEvent(event, ctx.isTTY, colors);
      if (shown === null) return;
      stopSpinner();
      (event.type === "error" ? ctx.stderr : ctx.stdout)(shown);
      stopSpinner = spinner(ctx.stderr, false);
    });
    stopSpinner();
    // A script must be able to tell an answer from a failure: anything but an answer, a command or a reaction is non-zero.
    if (outcome === "cancelled" || outcome === "interrupted") return 130;
    return outcome === "answered" || outcome === "command" || outcome === "reacted" ? 0 : 1;
  } finally {
    ctx.shutdown.removeEventListener("abort", onAbort);
    await session.close();
  }
}
