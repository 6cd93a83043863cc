/** `fermix ask "<text>"`: one turn, the reply on stdout. */
import { type CliContext, UsageError } from "./context.ts";
import { renderEvent, spinner } from "./render.ts";
import { openSession } from "./session.ts";

export async function main(args: string[], ctx: CliContext): Promise<number> {
  const text = args.join(" ").trim();
  if (text === "") throw new UsageError('nothing to ask: fermix ask "<text>"');
  const session = await openSession(ctx.env);
  const showSpinner = ctx.isTTY && !ctx.env.NO_COLOR;
  let stopSpinner = spinner(ctx.stderr, showSpinner);
  const onAbort = () => session.stop();
  ctx.shutdown.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await session.turn(text, (event) => {
      const shown = renderEvent(event, ctx.isTTY);
      if (shown === null) return;
      stopSpinner();
      (event.type === "error" ? ctx.stderr : ctx.stdout)(shown);
      stopSpinner = spinner(ctx.stderr, false);
    });
    stopSpinner();
    return outcome === "failed" || outcome === "restarting" ? 1 : outcome === "cancelled" || outcome === "interrupted" ? 130 : 0;
  } finally {
    ctx.shutdown.removeEventListener("abort", onAbort);
    await session.close();
  }
}
