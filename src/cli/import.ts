/**
 * `fermix import openclaw`: move in from OpenClaw in one command. The
 * OpenClaw home is read and planned by src/setup/openclaw/ (pure), then
 * written through setup's own steps; the command ends with the table of
 * what was imported, what was skipped and why, and what is left to do by
 * hand. `--dry-run` prints the same table and writes nothing. A running
 * daemon is told to reload, as after `fermix setup`.
 */
import { existsSync } from "node:fs";
import { DAY_MS } from "../agent/skills/library.ts";
import { ConfigError } from "../config/errors.ts";
import { resolveHome } from "../config/paths.ts";
import { applyImport, readFermixHome } from "../setup/openclaw/apply.ts";
import { diskFiles } from "../setup/openclaw/files.ts";
import { openClawDir, readOpenClawHome } from "../setup/openclaw/home.ts";
import { OpenClawFileError } from "../setup/openclaw/json5.ts";
import { type ImportPlan, planImport, writesNothing } from "../setup/openclaw/plan.ts";
import { renderTable, tally } from "../setup/openclaw/rows.ts";
import { type CliContext, UsageError } from "./context.ts";
import { daemonReport } from "./setup-daemon.ts";

export function importHelp(): string {
  return `Usage: fermix import openclaw [--from DIR] [--dry-run] [--force]

Moves an OpenClaw setup into Fermix: the model provider and its key, the
channels Fermix also has (Telegram, Slack, Discord, Signal; WhatsApp's
allowlist), who may talk to the assistant, the persona, skills, memory and
scheduled jobs. It ends with a table: what was imported, what was skipped
and why, and what is left for you to do by hand.

Where from: DIR, else $OPENCLAW_STATE_DIR, else $OPENCLAW_HOME/.openclaw,
else ~/.openclaw. Paths openclaw.json names under ~/.openclaw are read from
DIR, so a copied home imports as it is.

What becomes what:
  openclaw.json        the primary model's provider (made primary) and the
                       channels' tokens, allowlists and owner; a channel
                       Fermix lacks is listed. The owner is the one sender
                       commands.allowFrom names, else the only allowed one.
  secrets              from auth profiles, token files, the env block and
                       .env: into the OS keychain or the 0600 secrets.toml,
                       never into config.toml or this output
  SOUL.md              the persona, as a new revision (/soul history keeps
                       the old); IDENTITY.md and USER.md are appended to it
                       under "## Identity" and "## About your owner"
  AGENTS.md, TOOLS.md  copied to workspace/openclaw/ and listed for you to
  HEARTBEAT.md         merge: they describe OpenClaw's own tools
  MEMORY.md            memory facts (one per item or paragraph) in your memory
  memory/*.md          copied to workspace/memory/, where the assistant reads them
  skills/<name>/       skills (the workspace's, then ~/.openclaw/skills/)
  cron/jobs.json       jobs, when the schedule (cron; at; every N minutes or
                       hours that fit the clock, daily, weekly) and the target
                       (a chat on a channel Fermix serves, or the owner's own
                       chat) translate; the others are listed

Nothing Fermix already has is replaced: a different value is skipped and
says so. Importing twice changes nothing the second time.

Options:
  --from DIR   the OpenClaw home to read
  --dry-run    print the table, write nothing
  --force      replace what Fermix already has (the old persona stays in
               /soul history; config.toml is kept as config.toml.bak)`;
}

interface ImportArgs {
  from?: string;
  dryRun: boolean;
  force: boolean;
}

function parseArgs(args: readonly string[]): ImportArgs {
  const [source, ...rest] = args;
  if (source === undefined) throw new UsageError("say what to import from: fermix import openclaw");
  if (source !== "openclaw") throw new UsageError(`cannot import from "${source}": fermix imports from openclaw`);
  const parsed: ImportArgs = { dryRun: false, force: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--dry-run") parsed.dryRun = true;
    else if (arg === "--force") parsed.force = true;
    else if (arg === "--from" || arg.startsWith("--from=")) {
      const value = arg === "--from" ? rest[++i] : arg.slice("--from=".length);
      if (value === undefined || value.trim() === "") throw new UsageError("--from needs a folder: --from ~/.openclaw");
      parsed.from = value;
    } else throw new UsageError(`unknown option "${arg}"`);
  }
  return parsed;
}

export async function main(args: string[], ctx: CliContext): Promise<number> {
  const options = parseArgs(args);
  const dir = openClawDir(ctx.env, options.from);
  if (!existsSync(dir)) {
    ctx.stderr(`fermix: no OpenClaw home at ${dir}: give its folder with --from DIR (or set OPENCLAW_STATE_DIR)\n`);
    return 1;
  }
  let plan: ImportPlan;
  const fermix = await readFermixHome(ctx.env, Date.now());
  try {
    const home = readOpenClawHome(diskFiles, dir, ctx.env);
    plan = planImport(home, diskFiles, ctx.env, fermix.state, options.force);
  } catch (error) {
    if (error instanceof OpenClawFileError || error instanceof ConfigError) {
      ctx.stderr(`fermix: ${error.message}\nfermix: nothing was imported\n`);
      return 1;
    }
    throw error;
  }
  const into = resolveHome(ctx.env);
  ctx.stdout(`${options.dryRun ? "Dry run: what importing" : "Importing"} OpenClaw at ${dir} into Fermix at ${into}${options.dryRun ? " would do" : ""}\n\n`);
  ctx.stdout(renderTable(plan.rows));
  const counts = tally(plan.rows);
  if (options.dryRun) {
    ctx.stdout(
      `\ndry run: nothing was written (${counts.imported} to import, ${counts.unchanged} unchanged, ${counts.skipped} skipped, ${counts.manual} by hand)\n`,
    );
    return 0;
  }
  if (writesNothing(plan)) {
    ctx.stdout(`\nnothing changed: Fermix already has everything this import can bring (${counts.unchanged} unchanged, ${counts.skipped} skipped)\n`);
    return 0;
  }
  const parkAfterMs = plan.setup.resolved.config.fermix_core.skills.park_after_days * DAY_MS;
  const applied = await applyImport(fermix, plan, parkAfterMs);
  const lines = [`\nimported ${counts.imported} item${counts.imported === 1 ? "" : "s"} into ${into}`];
  if (applied.setup?.wrote) {
    lines.push(`wrote ${applied.setup.configPath}${applied.setup.backupPath ? ` (the previous one is ${applied.setup.backupPath})` : ""}`);
    const secrets = Object.keys(applied.setup.plan.secrets).length;
    if (secrets > 0) lines.push(`stored ${secrets} secret${secrets === 1 ? "" : "s"} in ${applied.setup.secretStore}`);
  }
  if (applied.soulRevision !== undefined) lines.push(`SOUL.md is now revision ${applied.soulRevision} (/soul history lists them)`);
  if (counts.manual > 0) lines.push(`${counts.manual} step${counts.manual === 1 ? " is" : "s are"} left to you: the "by hand" rows above`);
  ctx.stdout(`${lines.join("\n")}\n`);
  ctx.stdout(await daemonReport(fermix.current.paths.controlSocket));
  return 0;
}
