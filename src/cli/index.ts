/**
 * The command table and dispatcher. Each subcommand's module is imported only
 * when that subcommand runs, so `fermix --version` and `fermix doctor` never
 * pay for the daemon's imports.
 */
import { VERSION, VERSION_LINE } from "../version.ts";
import { type CliContext, type Subcommand, UsageError } from "./context.ts";
import { formatError } from "./errors.ts";

interface CommandSpec {
  summary: string;
  usage: string;
  /** A usage text built when asked for (its pieces live in the command's own modules). */
  help?: () => Promise<string>;
  load: () => Promise<Subcommand>;
}

const COMMANDS: Record<string, CommandSpec> = {
  run: {
    summary: "run the daemon in the foreground (what a systemd or launchd unit runs)",
    usage: `Usage: fermix run

Starts the daemon: the HTTP server (status page, health probes, metrics,
webhooks, setup page), the enabled channels and the agent. Stops cleanly on
SIGTERM or SIGINT. While nothing is configured yet it prints a one-time link
to the setup page on stdout.

Environment:
  FERMIX_HOME        home directory (default ~/.fermix)
  FERMIX_HTTP_BIND   address to bind (default 127.0.0.1)
  PORT               port to listen on (default 4030)
  FERMIX_LOG_LEVEL   debug | info | warn | error (default info)`,
    load: () => import("./run.ts"),
  },
  ask: {
    summary: "send one message to the running daemon and print the reply",
    usage: `Usage: fermix ask "<text>"

Sends one turn through the same gateway and agent as every channel and prints
the reply: through the running daemon when there is one (same history, same
queues), in this process otherwise. Slash commands work (/help, /new, …).
Ctrl-C stops the turn.`,
    load: () => import("./ask.ts"),
  },
  chat: {
    summary: "interactive chat with the running daemon",
    usage: `Usage: fermix chat

An interactive conversation over the same gateway and agent as every channel,
through the running daemon when there is one, in this process otherwise.
Up/Down browse history; end a line with \\ to continue on the next line;
Ctrl-C stops the running reply (or clears the line); Ctrl-D exits.`,
    load: () => import("./chat.ts"),
  },
  acp: {
    summary: "bridge an editor (Agent Client Protocol over stdio) to the daemon",
    usage: `Usage: fermix acp

For editors that launch an Agent Client Protocol agent (Zed, JetBrains,
Neovim, Emacs…): pipes stdin/stdout to the running daemon's <home>/acp.sock
and exits when either side closes. Start the daemon first with \`fermix run\`.`,
    load: () => import("./acp.ts"),
  },
  talk: {
    summary: "talk with the assistant live, by voice (microphone and speaker, or WAV files)",
    usage: "Usage: fermix talk [--input FILE.wav] [--output FILE.wav] [--push-to-talk]",
    help: () => import("./talk.ts").then((m) => m.TALK_USAGE),
    load: () => import("./talk.ts"),
  },
  setup: {
    summary: "configure providers and channels (interactive, or with flags)",
    usage: `Usage: fermix setup [--web] [--reconfigure] [--yes [--check]] [flags]`,
    help: () => import("./setup-args.ts").then((m) => m.setupHelp()),
    load: () => import("./setup.ts"),
  },
  import: {
    summary: "move in from OpenClaw: provider, channels, persona, skills, memory and jobs",
    usage: "Usage: fermix import openclaw [--from DIR] [--dry-run] [--force]",
    help: () => import("./import.ts").then((m) => m.importHelp()),
    load: () => import("./import.ts"),
  },
  service: {
    summary: "run fermix in the background: a systemd user service or a launchd agent",
    usage: `Usage: fermix service install|uninstall|status|logs

  install     write the unit (Linux: ~/.config/systemd/user/fermix.service;
              macOS: ~/Library/LaunchAgents/ai.fermix.daemon.plist) that runs
              this binary's \`fermix run\` with the current FERMIX_HOME, PORT,
              FERMIX_HTTP_BIND and PATH; enable and (re)start it. Running it
              again replaces the unit and restarts the service.
  uninstall   stop and disable the service, remove the unit
  status      whether it is installed and running (exit 3 when not)
  logs        its recent log lines (journalctl --user, or <home>/logs/fermix.log
              on macOS); --follow to keep reading, --lines=N (default 100)

\`systemctl --user reload fermix\` (SIGHUP) makes the daemon re-read its config.`,
    load: () => import("./service.ts"),
  },
  doctor: {
    summary: "check the configuration (offline unless --check); exit 1 when something would fail",
    usage: `Usage: fermix doctor [--check] [--json]

One row per concern: config, home permissions, database, providers, channels,
transcription, realtime voice, port. Exits 1 when any row fails. Offline by default.

Options:
  --check  also make one cheap authenticated call per provider (its model
           list, or Anthropic's model lookup; no tokens spent): a refused key
           or an unknown model fails its row
  --json   print the rows as JSON for scripts`,
    load: () => import("./doctor.ts"),
  },
};

export function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const rows = Object.entries(COMMANDS).map(([name, spec]) => `  ${name.padEnd(width)}  ${spec.summary}`);
  return `fermix ${VERSION} — a self-hosted personal AI assistant

Usage: fermix <command> [options]

Commands:
${rows.join("\n")}
  help${" ".repeat(width - 4)}  show this help, or a command's: fermix help <command>

Options:
  --version, -v   print the version
  --help, -h      show help (also after any command)
`;
}

const wantsHelp = (args: string[]) => args.includes("--help") || args.includes("-h");

/** Run the command line; returns the process exit code. */
export async function runCli(argv: string[], ctx: CliContext): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "help" || first === "--help" || first === "-h") {
    const topic = first === "help" ? rest[0] : undefined;
    if (topic) {
      const spec = COMMANDS[topic];
      if (!spec) return usageError(ctx, `unknown command "${topic}"`);
      ctx.stdout(`${spec.help ? await spec.help() : spec.usage}\n`);
      return 0;
    }
    ctx.stdout(helpText());
    return first === undefined ? 2 : 0;
  }
  if (first === "--version" || first === "-v" || first === "version") {
    ctx.stdout(`${VERSION_LINE}\n`);
    return 0;
  }
  const spec = COMMANDS[first];
  if (!spec) return usageError(ctx, `unknown command "${first}"`);
  if (wantsHelp(rest)) {
    ctx.stdout(`${spec.help ? await spec.help() : spec.usage}\n`);
    return 0;
  }
  try {
    const command = await spec.load();
    return await command.main(rest, ctx);
  } catch (error) {
    if (error instanceof UsageError) return usageError(ctx, error.message, first);
    ctx.stderr(`${formatError(error)}\n`);
    return 1;
  }
}

function usageError(ctx: CliContext, message: string, command?: string): number {
  ctx.stderr(`fermix: ${message}\nRun \`fermix ${command ? `${command} --help` : "help"}\` for usage.\n`);
  return 2;
}
