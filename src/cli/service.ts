/**
 * `fermix service install|uninstall|status|logs`: Fermix as a systemd user
 * service (Linux) or a launchd agent (macOS). status and logs hand the
 * terminal to systemctl/journalctl, or read launchctl and the log file.
 */
import {
  defaultServiceContext,
  installService,
  logPath,
  servicePlatform,
  serviceStatus,
  tailLog,
  UNIT_NAME,
  uninstallService,
  unitPath,
} from "../setup/service.ts";
import { type CliContext, UsageError } from "./context.ts";

export async function main(args: string[], ctx: CliContext): Promise<number> {
  const [action, ...rest] = args;
  const platform = servicePlatform();
  if (!platform) {
    ctx.stderr(
      `fermix: no supported service manager on ${process.platform} (systemd on Linux, launchd on macOS); run \`fermix run\` under your own supervisor\n`,
    );
    return 1;
  }
  const service = defaultServiceContext(ctx.env, platform);
  switch (action) {
    case "install":
    case "uninstall": {
      if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
      const report = action === "install" ? await installService(service) : await uninstallService(service);
      for (const line of report.lines) (report.ok ? ctx.stdout : ctx.stderr)(`${report.ok ? "" : "fermix: "}${line}\n`);
      return report.ok ? 0 : 1;
    }
    case "status": {
      if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
      const status = await serviceStatus(service);
      ctx.stdout(
        `${status.installed ? `installed: ${unitPath(service)}` : "not installed: `fermix service install` runs fermix in the background and at boot"}\n`,
      );
      if (!status.installed) return 3;
      if (platform === "systemd") return passthrough(ctx, ["systemctl", "--user", "status", "--no-pager", UNIT_NAME]);
      ctx.stdout(`${status.detail}\n`);
      return status.active ? 0 : 3;
    }
    case "logs": {
      const follow = rest.includes("--follow") || rest.includes("-f");
      const linesArg = rest.find((a) => /^--lines=\d+$/.test(a));
      const unknown = rest.find((a) => a !== "--follow" && a !== "-f" && a !== linesArg);
      if (unknown) throw new UsageError(`unknown option "${unknown}"`);
      const lines = linesArg ? Number(linesArg.split("=")[1]) : 100;
      if (platform === "systemd") {
        return passthrough(ctx, ["journalctl", "--user", "-u", UNIT_NAME, "-n", String(lines), "--no-pager", ...(follow ? ["-f"] : [])]);
      }
      if (follow) return passthrough(ctx, ["tail", "-n", String(lines), "-f", logPath(service)]);
      ctx.stdout(tailLog(service, lines));
      return 0;
    }
    default:
      throw new UsageError(action ? `unknown action "${action}"` : "which action? install, uninstall, status or logs");
  }
}

/** Run a command with this terminal, returning its exit code; a missing one is explained. */
async function passthrough(ctx: CliContext, command: string[]): Promise<number> {
  const executable = Bun.which(command[0]!, { PATH: ctx.env.PATH ?? "" });
  if (!executable) {
    ctx.stderr(`fermix: ${command[0]} is not on PATH\n`);
    return 127;
  }
  const proc = Bun.spawn([executable, ...command.slice(1)], { env: ctx.env as Record<string, string>, stdin: "inherit", stdout: "pipe", stderr: "pipe" });
  const pump = async (stream: ReadableStream<Uint8Array>, write: (text: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) write(decoder.decode(chunk, { stream: true }));
  };
  await Promise.all([pump(proc.stdout, ctx.stdout), pump(proc.stderr, ctx.stderr)]);
  return proc.exited;
}
