/**
 * `fermix setup`, the terminal face of src/setup/: the guided wizard in a
 * terminal (setup-wizard.ts), or, with --yes, the values given as flags
 * written without a question. Either way the same module validates, merges
 * and writes, and a running daemon is told to reload.
 */

import { profileOf } from "../channels/registry.ts";
import { SetupCheckError } from "../channels/setup.ts";
import { ConfigError } from "../config/errors.ts";
import { parseConfigText } from "../config/load.ts";
import { CHANNEL_NAMES } from "../config/schema.ts";
import { changesFromFlags, UnknownFlag } from "../setup/changes.ts";
import { checkProvider } from "../setup/check.ts";
import { ALL_FIELDS, PROVIDER_SLOT, SETUP_CHANNELS } from "../setup/fields.ts";
import { planSetup, type SetupChange } from "../setup/plan.ts";
import { describeChannel, describeComputer, describeProvider, describeTranscription } from "../setup/summary.ts";
import { type AppliedSetup, applySetup, type CurrentSetup, readCurrentSetup } from "../setup/write.ts";
import { type CliContext, UsageError } from "./context.ts";
import { parseSetupArgs } from "./setup-args.ts";
import { askSetupLink, daemonReport, daemonRunning } from "./setup-daemon.ts";

export { setupHelp } from "./setup-args.ts";

export async function main(args: string[], ctx: CliContext): Promise<number> {
  const parsed = parseSetupArgs(args);
  const current = await readCurrentSetup(ctx.env);
  if (parsed.web) return webLink(ctx, current.paths.controlSocket);
  if (!parsed.yes) {
    const terminal = ctx.isTTY ? ctx.terminal() : undefined;
    if (!terminal?.input.isTTY) {
      ctx.stderr(
        "fermix: setup asks its questions in a terminal, and this is not one.\n" +
          "Give the values as flags with --yes instead, e.g.\n" +
          "  fermix setup --yes --model gpt-5.1 --api-key sk-… --telegram-bot-token 123:ABC --telegram-owner 123456789\n" +
          "See `fermix setup --help` for every flag.\n",
      );
      return 2;
    }
    const { runWizard } = await import("./setup-wizard.ts");
    return runWizard({ ctx, current, args: parsed, terminal });
  }
  return withFlags(ctx, current, parsed.flags, parsed.reconfigure, parsed.check);
}

/** `--web`: the running daemon's one-time link to its setup page. */
async function webLink(ctx: CliContext, controlSocket: string): Promise<number> {
  if (!(await daemonRunning(controlSocket))) {
    ctx.stderr(
      "fermix: no daemon is running: start it with `fermix run` (it prints a setup link while nothing is configured), then run `fermix setup --web` again\n",
    );
    return 1;
  }
  const link = await askSetupLink(controlSocket);
  if ("error" in link) {
    ctx.stderr(`fermix: the daemon gave no setup link: ${link.error}\n`);
    return 1;
  }
  const minutes = Math.max(1, Math.round(link.expiresInSeconds / 60));
  ctx.stdout(`Open this link in a browser to set up Fermix (it works once, within ${minutes} min):\n  ${link.url}\n`);
  return 0;
}

/** `--yes`: write what the flags say; contact nothing unless --check. */
async function withFlags(ctx: CliContext, current: CurrentSetup, flags: Record<string, string>, reconfigure: boolean, check: boolean): Promise<number> {
  if (Object.keys(flags).length === 0) throw new UsageError("--yes needs values to write: give them as flags (see fermix setup --help)");
  if (current.exists && !reconfigure) {
    ctx.stderr(`fermix: ${current.paths.config} exists; add --reconfigure to change it (keys you do not name are kept)\n`);
    return 1;
  }
  let changes: SetupChange[];
  try {
    changes = changesFromFlags(flags, parseConfigText(current.text, current.paths.config), !current.exists);
  } catch (error) {
    if (error instanceof UnknownFlag) throw new UsageError(error.message);
    throw error;
  }
  try {
    if (check) {
      const plan = planSetup({ currentText: current.text, currentSecrets: current.secrets, changes, filePath: current.paths.config });
      const failures = await liveChecks(plan.resolved.config, changes);
      for (const line of failures.ok) ctx.stdout(`check: ${line}\n`);
      if (failures.failed.length > 0) {
        for (const line of failures.failed) ctx.stderr(`fermix: check failed: ${line}\n`);
        ctx.stderr("fermix: nothing was written\n");
        return 1;
      }
    }
    const applied = await applySetup(current, changes);
    ctx.stdout(writtenReport(applied));
  } catch (error) {
    if (error instanceof ConfigError) {
      ctx.stderr(
        `fermix: ${error.message}\n${flagsFor(error)
          .map((f) => `  (set by --${f})\n`)
          .join("")}fermix: nothing was written\n`,
      );
      return 1;
    }
    throw error;
  }
  ctx.stdout(await daemonReport(current.paths.controlSocket));
  return 0;
}

/** The flags behind a loader error's keys, so the user knows which one to fix. */
function flagsFor(error: ConfigError): string[] {
  return error.issues.flatMap((issue) => {
    // A list's issue names its entry (fermix_core.fallback[1]): the flag sets the whole list.
    const key = issue.key.replace(/\[\d+\]$/, "");
    const field = ALL_FIELDS.find((f) => new RegExp(`^${f.path.replace(PROVIDER_SLOT, "[^.]+").replaceAll(".", "\\.")}$`).test(key));
    return field ? [field.flag] : [];
  });
}

/** --check: the provider's model list and each pairing channel's token (Telegram's getMe), for what the flags changed. */
async function liveChecks(config: import("../config/schema.ts").Config, changes: readonly SetupChange[]): Promise<{ ok: string[]; failed: string[] }> {
  const ok: string[] = [];
  const failed: string[] = [];
  const touched = (prefix: string) => changes.some((c) => c.path.startsWith(prefix));
  const primary = Object.entries(config.fermix_core.providers).find(([, p]) => p.primary);
  if (primary && touched("fermix_core.providers.")) {
    const [name, p] = primary;
    const result = await checkProvider({ baseUrl: p.base_url, apiKey: p.api_key, model: p.model, api: p.api, authHeader: p.auth_header });
    if (result.ok) ok.push(`provider ${name}: ${p.base_url} answers and ${p.api === "anthropic" ? "knows" : "lists"} ${p.model}`);
    else failed.push(`provider ${name}: ${result.message}`);
  }
  for (const name of CHANNEL_NAMES) {
    const pairing = profileOf(name).setup?.pairing;
    const section = config.fermix_channels[name] as Record<string, unknown> & { enabled: boolean };
    const token = pairing ? section[pairing.tokenKey] : undefined;
    if (!pairing || !section.enabled || typeof token !== "string" || token === "" || !touched(`fermix_channels.${name}.`)) continue;
    try {
      const bot = await pairing.bot(token, { apiRoot: String(section[pairing.apiRootKey]) });
      ok.push(`${name}: the token belongs to @${bot.username}`);
    } catch (error) {
      failed.push(`${name}: ${error instanceof SetupCheckError ? error.message : String(error)}`);
    }
  }
  return { ok, failed };
}

/** What was written and where, and what is configured now (secrets only as "set"). */
export function writtenReport(applied: AppliedSetup): string {
  const { config } = applied.plan.resolved;
  const lines: string[] = [];
  if (!applied.wrote) lines.push(`nothing changed in ${applied.configPath}`);
  else {
    lines.push(`wrote ${applied.configPath}${applied.backupPath ? ` (the previous one is ${applied.backupPath})` : ""}`);
    const secrets = Object.keys(applied.plan.secrets).length;
    if (secrets > 0) lines.push(`stored ${secrets} secret${secrets === 1 ? "" : "s"} in ${applied.secretStore}`);
  }
  lines.push(`provider:      ${describeProvider(config)}`);
  for (const name of SETUP_CHANNELS) lines.push(`${`${name}:`.padEnd(15)}${describeChannel(config, name)}`);
  lines.push(`transcription: ${describeTranscription(config)}`);
  lines.push(`computer use:  ${describeComputer(config)}`);
  return `${lines.join("\n")}\n`;
}
