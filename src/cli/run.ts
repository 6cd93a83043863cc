/** `fermix run`: the daemon in the foreground until SIGTERM or SIGINT. */
import { startDaemon } from "../daemon/daemon.ts";
import { createLogger } from "../kernel/log.ts";
import { presenter } from "../gateway/presenter.ts";
import { type CliContext, UsageError } from "./context.ts";

export async function main(args: string[], ctx: CliContext): Promise<number> {
  if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`);
  const log = createLogger(ctx.env);
  const daemon = await startDaemon({ env: ctx.env, log, presenter });
  ctx.onReload?.(() => void daemon.reload());
  await new Promise<void>((resolve) => {
    if (ctx.shutdown.aborted) return resolve();
    ctx.shutdown.addEventListener("abort", () => resolve(), { once: true });
  });
  log.info("shutting down", { signal: String(ctx.shutdown.reason ?? "") });
  await daemon.stop();
  return 0;
}
