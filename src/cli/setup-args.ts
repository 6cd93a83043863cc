/** `fermix setup`'s command line: its options, its value flags (from setup's field table), and its --help. */
import { profileOf } from "../channels/registry.ts";
import { CHANNEL_NAMES } from "../config/schema.ts";
import { KNOWN_PROVIDERS, PROVIDER_FLAG, PROVIDER_NAME_FLAG } from "../setup/changes.ts";
import {
  ALL_FIELDS,
  CHANNEL_FIELDS,
  COMPUTER_FIELDS,
  FALLBACK_FIELDS,
  HTTP_FIELDS,
  PROVIDER_FIELDS,
  REALTIME_FIELDS,
  type SetupField,
  TRANSCRIPTION_FIELDS,
  WEB_FIELDS,
} from "../setup/fields.ts";
import { KNOWN_SERVERS } from "../setup/probe.ts";
import { UsageError } from "./context.ts";

export interface SetupArgs {
  /** Value flags by name (no dashes) → the raw string given. */
  flags: Record<string, string>;
  yes: boolean;
  reconfigure: boolean;
  check: boolean;
  noService: boolean;
  /** Ask the running daemon for a one-time link to the web setup page instead. */
  web: boolean;
  /** How long the wizard's Telegram pairing waits for a message (--pair-timeout, seconds). */
  pairTimeoutSeconds?: number;
}

/** The wizard waits this long for the pairing message unless --pair-timeout says otherwise. */
export const PAIR_TIMEOUT_SECONDS = 120;
const PAIR_TIMEOUT_MAX_SECONDS = 3600;
const PAIR_TIMEOUT_FLAG = "pair-timeout";

const SWITCHES: Record<string, keyof Omit<SetupArgs, "flags" | "pairTimeoutSeconds">> = {
  "--yes": "yes",
  "-y": "yes",
  "--reconfigure": "reconfigure",
  "--check": "check",
  "--no-service": "noService",
  "--web": "web",
};

export function parseSetupArgs(args: readonly string[]): SetupArgs {
  const known = new Set([...ALL_FIELDS.map((f) => f.flag), PROVIDER_FLAG, PROVIDER_NAME_FLAG, PAIR_TIMEOUT_FLAG]);
  const parsed: SetupArgs = { flags: {}, yes: false, reconfigure: false, check: false, noService: false, web: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const switchName = SWITCHES[arg];
    if (switchName) {
      parsed[switchName] = true;
      continue;
    }
    const match = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
    if (!match || !known.has(match[1]!)) throw new UsageError(`unknown option "${arg.split("=")[0]}"`);
    const name = match[1]!;
    let value = match[2];
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
    }
    if (name === PAIR_TIMEOUT_FLAG) {
      parsed.pairTimeoutSeconds = pairTimeout(value);
      continue;
    }
    parsed.flags[name] = value;
  }
  if (parsed.pairTimeoutSeconds !== undefined && (parsed.yes || parsed.web))
    throw new UsageError("--pair-timeout goes with the wizard (it pairs Telegram by a message)");
  if (parsed.check && !parsed.yes) throw new UsageError("--check goes with --yes (the wizard checks as it goes)");
  if (parsed.web && (parsed.yes || Object.keys(parsed.flags).length > 0)) throw new UsageError("--web opens the setup page; give flags with --yes instead");
  return parsed;
}

function pairTimeout(raw: string): number {
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || seconds < 1 || seconds > PAIR_TIMEOUT_MAX_SECONDS) {
    throw new UsageError(`--pair-timeout "${raw}" is not valid: expected a whole number of seconds from 1 to ${PAIR_TIMEOUT_MAX_SECONDS}`);
  }
  return seconds;
}

const flagLine = (f: SetupField) => {
  const kind = f.kind === "boolean" ? "true|false" : f.kind === "integer" ? "N" : f.kind === "list" ? "A,B" : "VALUE";
  return `  --${`${f.flag} ${kind}`.padEnd(36)} ${f.help}`;
};

export function setupHelp(): string {
  const channels = CHANNEL_NAMES.flatMap((name) => {
    const setup = profileOf(name).setup;
    return setup
      ? [
          `${setup.label}:\n${CHANNEL_FIELDS.filter((f) => f.path.startsWith(`fermix_channels.${name}.`))
            .map(flagLine)
            .join("\n")}`,
        ]
      : [];
  }).join("\n\n");
  return `Usage: fermix setup [--web] [--reconfigure] [--yes [--check]] [flags]

In a terminal, without --yes: a guided setup. The model provider (a local
server answering on its usual port is offered with its models), the channels
and their owners (Telegram pairs by a message to your bot), voice-note
transcription, realtime voice, and the background service. Every step shows what is
configured now and can be skipped.

With --yes, setup writes the values given as flags and asks nothing. It
contacts no service unless --check is given. Without --yes, the flags given
preset those answers in the wizard.

A bad value fails with the config loader's message, before anything is
written. config.toml is written atomically (mode 0600; the previous file is
kept as config.toml.bak), keeping the keys setup does not manage and their
comments. Credentials go to the OS keychain, or <home>/secrets.toml (0600)
where there is none; never to config.toml. A running daemon is told to reload
and its health is shown.

With --web, setup asks the running daemon for a one-time link to its setup
page (the same steps in a browser, applied without a restart) and prints it.
The link works once, within 15 minutes ([fermix_core.http] token_ttl_seconds).

Options:
  --web              print a one-time link to the daemon's web setup page
  --reconfigure      change an existing configuration, starting from its values
                     (without it, setup will not touch an existing config.toml)
  --yes, -y          non-interactive: write what the flags say
  --check            with --yes: check the provider (one authenticated call: its
                     model list, or Anthropic's model lookup) and the Telegram
                     token (getMe) first; write nothing if one fails
  --no-service       do not offer to install the background service
  --pair-timeout S   how long Telegram pairing waits for your message before
                     asking you to type your id instead (default ${PAIR_TIMEOUT_SECONDS} s)

Provider (made the primary one):
  --${`${PROVIDER_FLAG} NAME`.padEnd(36)} ${[...Object.keys(KNOWN_PROVIDERS), ...KNOWN_SERVERS.map((k) => k.id)].join(", ")} bring their
  ${"".padEnd(38)} API and URL; any other name is the table name
  --${`${PROVIDER_NAME_FLAG} NAME`.padEnd(36)} its table name (default: --provider, openai, the local server's kind, or custom)
${PROVIDER_FIELDS.map(flagLine).join("\n")}

Failover:
${FALLBACK_FIELDS.map(flagLine).join("\n")}

${channels}

A channel named by any of its flags is turned on. On a fresh home, Telegram
(on by default) is written off unless a flag names it.

Transcription (voice notes):
${TRANSCRIPTION_FIELDS.map(flagLine).join("\n")}

Web search (web_search; web_fetch needs nothing):
${WEB_FIELDS.map(flagLine).join("\n")}

Computer use (the assistant drives a desktop; see docs/computer-use.md):
${COMPUTER_FIELDS.map(flagLine).join("\n")}
Realtime voice (docs/realtime.md):
${REALTIME_FIELDS.map(flagLine).join("\n")}

HTTP:
${HTTP_FIELDS.map(flagLine).join("\n")}

Environment:
  FERMIX_HOME            home directory (default ~/.fermix)
  FERMIX_SECRET_STORE    file | keychain: force where credentials go
  FERMIX_SETUP_PROBES    host:port,… to look for local model servers
                         (default: 127.0.0.1 on 11434, 8080, 1234, 8000)`;
}
