/** `fermix run`: the daemon in the foreground until SIGTERM or SIGINT. */
import { rootWarning } from "../agent/sandbox/identity.ts";
import { startDaemon } from "../daemon/daemon.ts";
import { createLogger } from "../kernel/log.ts";
import { type CliContext, UsageError } from "./context.ts";

export async function main(args: string[], ctx: CliContext): Promise<number> {
  if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`);
  const log = createLogger(ctx.env);
  // Said before anything starts, as doctor's "user" row says it.
  const asRoot = rootWarning(process.getuid?.() ?? -1, process.platform);
  if (asRoot) log.warn(asRoot);
  const daemon = await startDaemon({ env: ctx.env, log });
  // The binary starts with JIT tier-up slowed (build.ts STARTUP_JIT_POLICY) so code that runs once at start
  // stays in the interpreter; from here on, what gets hot compiles as usual.
  Bun.unsafe.setJITPolicy(1);
  ctx.onReload?.(() => void daemon.reload());
  const dashboard = daemon.dashboardLink();
  if (dashboard) {
    // On stdout, not in the log, like the setup link: the token opens the status page and /metrics for whoever has it.
    ctx.stdout(
      `The status page is open to the network and needs a token. Open this link in your browser once (it sets a cookie):\n  ${dashboard}\nScrapers of /metrics send the token in \`Authorization: Bearer <token>\`. It lasts until fermix stops; [fermix_core.http] dashboard_token sets one that stays.\n`,
    );
  }
  if (daemon.report().status === "setup_required") {
    // On stdout, not in the log: the link opens the setup page once, for whoever has it.
    const link = daemon.setupLink();
    ctx.stdout(
      `Fermix needs setting up. Open this link to do it in a browser (it works once, for ${Math.round(link.expiresInSeconds / 60)} min):\n  ${link.url}\nor run \`fermix setup\` in a terminal.\n`,
    );
  }
  await new Promise<void>((resolve) => {
    if (ctx.shutdown.aborted) return resolve();
    ctx.shutdown.addEventListener("abort", () => resolve(), { once: true });
  });
  log.info("shutting down", { signal: String(ctx.shutdown.reason ?? "") });
  await daemon.stop();
  return 0;
}
