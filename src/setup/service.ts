/**
 * Fermix as a background service: a systemd user unit on Linux
 * (`~/.config/systemd/user/fermix.service`, driven by `systemctl --user`),
 * a launchd agent on macOS (`~/Library/LaunchAgents/ai.fermix.daemon.plist`,
 * loaded with `launchctl bootstrap`). The unit and plist are pure text; the
 * commands go through an injected runner, so tests use recording fakes on
 * PATH. Re-installing replaces the unit and restarts the service.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { build as buildPlist } from "plist";
import type { Env } from "../config/load.ts";
import { resolveHome } from "../config/paths.ts";
import { PROJECT_URL } from "../version.ts";

export type ServicePlatform = "systemd" | "launchd";

export const UNIT_NAME = "fermix.service";
export const LAUNCHD_LABEL = "ai.fermix.daemon";

/** The environment a service keeps from the shell that installed it. */
const KEPT_ENV = ["PATH", "PORT", "FERMIX_HTTP_BIND", "FERMIX_LOG_LEVEL", "FERMIX_SECRET_STORE", "SIGNAL_CLI_PATH", "XDG_DATA_HOME"] as const;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}
/** Run a command (looked up on PATH); a missing executable is code 127. */
export type Runner = (command: string[]) => Promise<RunResult>;

export interface ServiceContext {
  platform: ServicePlatform;
  /** The user's home directory. */
  userHome: string;
  /** Fermix's home (FERMIX_HOME or ~/.fermix). */
  fermixHome: string;
  /** The fermix executable the service runs (absolute). */
  execPath: string;
  /** Variables written into the unit. */
  environment: Record<string, string>;
  uid: number;
  user: string;
  run: Runner;
  /** systemd's user config dir ($XDG_CONFIG_HOME, else ~/.config). */
  configHome: string;
}

export function servicePlatform(platform: string = process.platform): ServicePlatform | undefined {
  if (platform === "linux") return "systemd";
  if (platform === "darwin") return "launchd";
  return undefined;
}

/** Runs commands with Bun.spawn, PATH from `env`. */
export function spawnRunner(env: Env): Runner {
  return async (command) => {
    const executable = Bun.which(command[0]!, { PATH: env.PATH ?? "" });
    if (!executable) return { code: 127, stdout: "", stderr: `${command[0]}: not found` };
    const proc = Bun.spawn([executable, ...command.slice(1)], { env: env as Record<string, string>, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  };
}

/** The context for this process: this executable, this user, this environment. */
export function defaultServiceContext(env: Env, platform: ServicePlatform): ServiceContext {
  const userHome = env.HOME || homedir();
  const environment: Record<string, string> = { FERMIX_HOME: resolveHome(env) };
  for (const name of KEPT_ENV) {
    const value = env[name];
    if (value) environment[name] = value;
  }
  return {
    platform,
    userHome,
    fermixHome: resolveHome(env),
    execPath: process.execPath,
    environment,
    uid: process.getuid?.() ?? 0,
    user: env.USER || env.LOGNAME || String(process.getuid?.() ?? ""),
    run: spawnRunner(env),
    configHome: env.XDG_CONFIG_HOME || join(userHome, ".config"),
  };
}

export function unitPath(ctx: ServiceContext): string {
  return ctx.platform === "systemd"
    ? join(ctx.configHome, "systemd", "user", UNIT_NAME)
    : join(ctx.userHome, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
}

export function logPath(ctx: ServiceContext): string {
  return join(ctx.fermixHome, "logs", "fermix.log");
}

/** A value for a systemd setting: quoted, with `%` specifiers escaped (and `$`, in a command line, where it expands variables). */
function systemdQuote(value: string, commandLine = false): string {
  const escaped = value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("%", "%%");
  return `"${commandLine ? escaped.replaceAll("$", "$$$$") : escaped}"`;
}

export function systemdUnit(ctx: ServiceContext): string {
  const environment = Object.entries(ctx.environment).map(([k, v]) => `Environment=${systemdQuote(`${k}=${v}`)}`);
  return `# Written by \`fermix service install\`; \`fermix service uninstall\` removes it.
[Unit]
Description=Fermix personal AI assistant
Documentation=${PROJECT_URL}
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
ExecStart=${systemdQuote(ctx.execPath, true)} run
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=5
UMask=0077
${environment.join("\n")}

[Install]
WantedBy=default.target
`;
}

/** The launchd agent: run at load, kept alive, logs to <home>/logs/fermix.log. */
export function launchdPlist(ctx: ServiceContext): string {
  return buildPlist({
    Label: LAUNCHD_LABEL,
    ProgramArguments: [ctx.execPath, "run"],
    EnvironmentVariables: ctx.environment,
    WorkingDirectory: ctx.fermixHome,
    RunAtLoad: true,
    KeepAlive: true,
    ThrottleInterval: 5,
    ProcessType: "Background",
    StandardOutPath: logPath(ctx),
    StandardErrorPath: logPath(ctx),
  });
}

export interface ServiceReport {
  ok: boolean;
  lines: string[];
}

const describeRun = (command: string[], r: RunResult) =>
  `\`${command.join(" ")}\` failed (exit ${r.code})${r.stderr.trim() ? `: ${r.stderr.trim().split("\n")[0]}` : ""}`;

/** Write the unit (replacing any previous one), then enable and (re)start it. */
export async function installService(ctx: ServiceContext): Promise<ServiceReport> {
  if (basename(ctx.execPath) === "bun" || basename(ctx.execPath) === "node") {
    return {
      ok: false,
      lines: [`a service must run the installed fermix binary, not ${ctx.execPath}: install it (install.sh) and run \`fermix service install\` from it`],
    };
  }
  const path = unitPath(ctx);
  mkdirSync(join(path, ".."), { recursive: true });
  mkdirSync(ctx.fermixHome, { recursive: true, mode: 0o700 });
  const lines: string[] = [];
  const step = async (command: string[], required = true): Promise<boolean> => {
    const result = await ctx.run(command);
    if (result.code === 0 || !required) return true;
    lines.push(describeRun(command, result));
    return false;
  };
  if (ctx.platform === "systemd") {
    const replacing = existsSync(path);
    writeFileSync(path, systemdUnit(ctx), { mode: 0o644 });
    lines.push(`${replacing ? "replaced" : "wrote"} ${path}`);
    const ok =
      (await step(["systemctl", "--user", "daemon-reload"])) &&
      (await step(["systemctl", "--user", "enable", UNIT_NAME])) &&
      (await step(["systemctl", "--user", "restart", UNIT_NAME]));
    if (!ok) return { ok, lines };
    lines.push(`enabled and started ${UNIT_NAME} (systemctl --user status fermix)`);
    const linger = await ctx.run(["loginctl", "show-user", ctx.user, "--property=Linger"]);
    if (linger.code === 0 && /Linger=no/.test(linger.stdout)) {
      lines.push(`lingering is off: the service stops when you log out and starts only at login. To run it from boot: loginctl enable-linger ${ctx.user}`);
    }
    return { ok, lines };
  }
  mkdirSync(join(ctx.fermixHome, "logs"), { recursive: true, mode: 0o700 });
  const target = `gui/${ctx.uid}`;
  await step(["launchctl", "bootout", `${target}/${LAUNCHD_LABEL}`], false);
  const replacing = existsSync(path);
  writeFileSync(path, launchdPlist(ctx), { mode: 0o644 });
  lines.push(`${replacing ? "replaced" : "wrote"} ${path}`);
  const ok = await step(["launchctl", "bootstrap", target, path]);
  if (ok) lines.push(`loaded ${LAUNCHD_LABEL}; logs go to ${logPath(ctx)}`);
  return { ok, lines };
}

/** Stop and disable the service and remove its unit. */
export async function uninstallService(ctx: ServiceContext): Promise<ServiceReport> {
  const path = unitPath(ctx);
  const lines: string[] = [];
  if (ctx.platform === "systemd") {
    await ctx.run(["systemctl", "--user", "disable", "--now", UNIT_NAME]);
    if (existsSync(path)) {
      rmSync(path);
      lines.push(`removed ${path}`);
    } else lines.push(`${path} was not installed`);
    await ctx.run(["systemctl", "--user", "daemon-reload"]);
    return { ok: true, lines };
  }
  await ctx.run(["launchctl", "bootout", `gui/${ctx.uid}/${LAUNCHD_LABEL}`]);
  if (existsSync(path)) {
    rmSync(path);
    lines.push(`removed ${path}`);
  } else lines.push(`${path} was not installed`);
  return { ok: true, lines };
}

export interface ServiceStatus {
  installed: boolean;
  /** undefined when the service manager could not be asked. */
  active: boolean | undefined;
  detail: string;
}

/** Whether the unit is installed, and whether the service manager says it runs. */
export async function serviceStatus(ctx: ServiceContext): Promise<ServiceStatus> {
  const path = unitPath(ctx);
  const installed = existsSync(path);
  if (!installed) return { installed, active: false, detail: `not installed (${path})` };
  if (ctx.platform === "systemd") {
    const result = await ctx.run(["systemctl", "--user", "is-active", UNIT_NAME]);
    const state = result.stdout.trim();
    if (state === "active") return { installed, active: true, detail: `${UNIT_NAME} active` };
    if (result.code === 127 || state === "") return { installed, active: undefined, detail: `${path} installed; systemctl --user could not be asked` };
    return { installed, active: false, detail: `${UNIT_NAME} ${state}` };
  }
  const result = await ctx.run(["launchctl", "print", `gui/${ctx.uid}/${LAUNCHD_LABEL}`]);
  if (result.code !== 0) return { installed, active: false, detail: `${LAUNCHD_LABEL} not loaded` };
  const state = /state = (\w+)/.exec(result.stdout)?.[1] ?? "loaded";
  return { installed, active: state === "running", detail: `${LAUNCHD_LABEL} ${state}` };
}

/** The last `lines` lines of the launchd log file (launchd has no journal of its own for agents). */
export function tailLog(ctx: ServiceContext, lines: number): string {
  const path = logPath(ctx);
  if (!existsSync(path)) return "";
  const text = readFileSync(path, "utf8");
  // A last line still being written (no newline yet) counts as a line too.
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  if (body === "") return "";
  return `${body.split("\n").slice(-lines).join("\n")}\n`;
}
