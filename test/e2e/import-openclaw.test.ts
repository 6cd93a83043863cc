/**
 * `fermix import openclaw` from the compiled binary, on OpenClaw homes
 * written from OpenClaw's documented layout (test/setup/openclaw/fixtures/),
 * each copied by the test with its base URLs pointed at the loopback fakes.
 * What a person moving in would notice: the config loads and `fermix
 * doctor` passes; the running daemon reloads and answers on the imported
 * Telegram bot; SOUL.md is the persona as a new revision (/soul history);
 * the skills are listed by /skills and the jobs by /tasks; the credentials
 * are in the secret store and nowhere in config.toml or the output.
 * `--dry-run` writes nothing and a second import changes nothing (both
 * checked by file hashes), and a broken openclaw.json fails with its file,
 * line and reason.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { User } from "grammy/types";
import { startDiscordFake } from "../fakes/discord.ts";
import { startSlackFake } from "../fakes/slack.ts";
import { ALICE, type TelegramFake } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { tomlTable } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";

const start = e2eResources();
const FIXTURES = join(import.meta.dir, "..", "setup", "openclaw", "fixtures");

/** Every credential the fixtures hold: none may show in config.toml or in what the command prints. */
const SECRETS = {
  minimalTelegram: "7100000001:AAMinimalFixtureTelegramTokenxxxxxxx",
  minimalOpenai: "sk-fixture-minimal-openai-0001",
  fullTelegram: "7200000002:AAFullFixtureTelegramTokenxxxxxxxxxx",
  fullOpenai: "sk-fixture-full-openai-0002",
  fullSlack: "xoxb-0000000001-0000000002-FixtureFullSlackToken",
  fullSlackSigning: "fixture-full-slack-signing-secret-0000",
  fullDiscord: "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GfAkE0.fixture-full-discord-token-0000",
  json5Telegram: "7300000003:AAJson5FixtureTelegramTokenxxxxxxxxx",
  json5Openai: "sk-fixture-json5-openai-0003",
};

/** A copy of a fixture home with each `[from, to]` replaced in every file (base URLs → the fakes), removed after the test. */
function fixtureCopy(name: string, replacements: ReadonlyArray<readonly [string, string]> = []): string {
  const dir = join(mkdtempSync(join(tmpdir(), "openclaw-home-")), ".openclaw");
  start.defer(() => rmSync(join(dir, ".."), { recursive: true, force: true }));
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  const visit = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const file = join(path, entry.name);
      if (entry.isDirectory()) visit(file);
      else {
        let text = readFileSync(file, "utf8");
        for (const [from, to] of replacements) text = text.replaceAll(from, to);
        writeFileSync(file, text);
      }
    }
  };
  visit(dir);
  return dir;
}

/**
 * sha-256 of every file under `dir`. SQLite creates its shared-memory index
 * (`-shm`) and an empty write-ahead log beside a database whenever one is
 * opened, a read-only look (as `fermix doctor`'s) included: the index is
 * left out and an empty log counts as no log, so what is compared is content.
 */
function hashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const visit = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const file = join(path, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.isFile() && !entry.name.endsWith("-shm") && !(entry.name.endsWith("-wal") && statSync(file).size === 0)) {
        out[relative(dir, file)] = new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");
      }
    }
  };
  visit(dir);
  return out;
}

const importFrom = (home: TestHome, dir: string, ...flags: string[]) => runFermix(["import", "openclaw", "--from", dir, ...flags], home.env);

function expectNoSecret(text: string): void {
  for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
}

interface DoctorRow {
  check: string;
  status: string;
  detail: string;
}

async function doctor(home: TestHome): Promise<DoctorRow[]> {
  const run = await runFermix(["doctor", "--json"], home.env);
  return (JSON.parse(run.stdout) as { rows: DoctorRow[] }).rows;
}

/** Send `text` as `from` on Telegram and return the bot's new messages in that chat. */
function sender(telegram: TelegramFake) {
  return async (text: string, from: User = ALICE): Promise<string> => {
    const before = telegram.visibleTexts(from.id).length;
    telegram.pushMessage(telegram.message.text(text, { from }));
    const texts = await telegram.waitForTexts(from.id, (t) => t.length > before, 10_000);
    return texts.slice(before).join("\n");
  };
}

test("the full home, into a running daemon: it reloads and serves the imported bot; /soul history, /skills and /tasks show the persona, skills and jobs; the credentials are only in the secret store; importing again changes nothing", async () => {
  const model = await start.model();
  const telegram = start.telegram({ token: SECRETS.fullTelegram });
  const slack = startSlackFake({ token: SECRETS.fullSlack });
  start.defer(() => slack.stop());
  const discord = startDiscordFake({ token: SECRETS.fullDiscord });
  start.defer(() => discord.stop());
  const signal = start.signal();
  const openclaw = fixtureCopy("full", [
    ["https://api.openai.com/v1", model.url],
    ["https://api.telegram.org", telegram.url],
    ['"cliPath": "signal-cli"', `"cliPath": ${JSON.stringify(signal.cliPath)}`],
  ]);
  const home = start.home();
  // Where the Slack and Discord fakes are: Fermix keys OpenClaw has no equivalent for, which the import keeps as they are.
  home.writeConfig(tomlTable("fermix_channels.slack", { api_url: slack.apiUrl }) + tomlTable("fermix_channels.discord", { api_base: discord.apiBase }));

  // --dry-run prints the table and writes nothing.
  const before = hashes(home.home);
  const dry = await importFrom(home, openclaw, "--dry-run");
  expect(dry.exitCode).toBe(0);
  expect(dry.stdout).toContain("dry run: nothing was written");
  expect(dry.stdout).toMatch(/imported\s+skill weekly-report/);
  expect(hashes(home.home)).toEqual(before);

  // A daemon with nothing configured yet; the import has it reload.
  const daemon = await start.daemon(home);
  const run = await importFrom(home, openclaw);
  expect(run.stderr).toBe("");
  expect(run.exitCode).toBe(0);
  expectNoSecret(run.stdout);
  expectNoSecret(dry.stdout);
  expect(run.stdout).toMatch(/imported\s+provider openai\s+gpt-5\.1/);
  expect(run.stdout).toMatch(/imported\s+Telegram owner\s+111111111/);
  expect(run.stdout).toMatch(/skipped\s+channel imessage\s+Fermix has no imessage channel/);
  expect(run.stdout).toMatch(/skipped\s+WhatsApp turned on\s+left off: OpenClaw's WhatsApp is a linked device/);
  expect(run.stdout).toMatch(/by hand\s+WhatsApp\s+Register the WhatsApp webhook/);
  expect(run.stdout).toMatch(/skipped\s+job "Odd interval"/);
  expect(run.stdout).toContain("the running daemon reloaded");
  for (const channel of ["telegram", "slack", "discord", "signal"]) expect(run.stdout).toMatch(new RegExp(`channels: .*${channel} started`));

  // The credentials are in the secret store, not in config.toml, which the loader takes.
  const config = readFileSync(join(home.home, "config.toml"), "utf8");
  expectNoSecret(config);
  expect(config).toContain(`api_url = "${slack.apiUrl}"`);
  const secrets = Bun.TOML.parse(readFileSync(join(home.home, "secrets.toml"), "utf8")) as Record<string, Record<string, Record<string, unknown>>>;
  expect(secrets.fermix_core!.providers).toEqual({ openai: { api_key: SECRETS.fullOpenai } });
  expect(secrets.fermix_channels).toEqual({
    telegram: { bot_token: SECRETS.fullTelegram },
    slack: { bot_token: SECRETS.fullSlack, signing_secret: SECRETS.fullSlackSigning },
    discord: { bot_token: SECRETS.fullDiscord },
  });
  expect(statSync(join(home.home, "secrets.toml")).mode & 0o777).toBe(0o600);

  // The imported bot answers its imported owner: the persona, the skills and the jobs are there.
  const say = sender(telegram);
  const history = await say("/soul history");
  expect(history).toContain("manual edit (imported from OpenClaw (SOUL.md, IDENTITY.md, USER.md))");
  expect(history).toMatch(/#2 .*current/);
  const soul = readFileSync(join(home.home, "workspace", "SOUL.md"), "utf8");
  expect(soul).toContain("You are warm, precise and a little dry.");
  expect(soul).toContain("## Identity\n\n- Name: Juniper");
  expect(soul).toContain("## About your owner\n\n- Name: Alice");
  const skills = await say("/skills");
  expect(skills).toContain("weekly-report");
  expect(skills).toContain("tidy-downloads");
  expect(skills).not.toContain("Bad_Name");
  const script = join(home.home, "workspace", "skills", "weekly-report", "scripts", "collect.sh");
  expect(readFileSync(script, "utf8")).toContain("cat reports/*.md");
  expect(statSync(script).mode & 0o777).toBe(0o700);
  const tasks = await say("/tasks");
  expect(tasks).toContain("Summarize overnight updates.");
  expect(tasks).toContain("Remind me to renew the passport.");
  expect(tasks).toContain("0 7 * * *");

  // Memory facts and the daily notes.
  const db = new Database(join(home.home, "fermix.db"), { readonly: true });
  try {
    const facts = (db.query("SELECT text FROM memories WHERE scope = 'owner' ORDER BY id").all() as Array<{ text: string }>).map((r) => r.text);
    expect(facts).toContain("Preferences: Alice drinks her coffee black.");
    expect(facts).toContain("People: Bob is Alice's brother; his birthday is 12 May.");
  } finally {
    db.close();
  }
  expect(readFileSync(join(home.home, "workspace", "memory", "2026-01-05.md"), "utf8")).toContain("Planted garlic");

  // A second import, the daemon still running: nothing changes, and it says so.
  const written = () => {
    const all = hashes(home.home);
    return Object.fromEntries(Object.entries(all).filter(([path]) => !path.startsWith("fermix.db")));
  };
  const settled = written();
  const again = await importFrom(home, openclaw);
  expect(again.exitCode).toBe(0);
  expect(again.stdout).toContain("nothing changed");
  expect(again.stdout).not.toMatch(/^imported /m);
  expect(written()).toEqual(settled);
  expectNoSecret(again.stdout);

  await daemon.stop();
  const rows = await doctor(home);
  expect(rows.filter((r) => r.status === "fail")).toEqual([]);
  expect(rows.find((r) => r.check === "channel signal signal-cli")?.status).toBe("ok");
});

test("the minimal home: --dry-run on a fresh Fermix creates nothing; the import loads, passes doctor and serves the bot; a second import changes no file", async () => {
  const model = await start.model();
  const telegram = start.telegram({ token: SECRETS.minimalTelegram });
  const openclaw = fixtureCopy("minimal", [["https://api.openai.com/v1", model.url]]);
  const home = start.home();

  const dry = await importFrom(home, openclaw, "--dry-run");
  expect(dry.exitCode).toBe(0);
  expect(dry.stdout).toMatch(/imported\s+Telegram settings\s+bot token/);
  expect(existsSync(home.home)).toBe(false);
  // Where the Telegram fake is: a key OpenClaw's minimal home does not set, which the import keeps.
  home.writeConfig(tomlTable("fermix_channels.telegram", { api_root: telegram.url }));

  const run = await importFrom(home, openclaw);
  expect(run.exitCode).toBe(0);
  expectNoSecret(run.stdout + run.stderr);
  expectNoSecret(readFileSync(join(home.home, "config.toml"), "utf8"));
  expect(run.stdout).toContain("stored 2 secrets");
  expect(run.stdout).toContain("SOUL.md is now revision 2");
  expect(run.stdout).toContain("no daemon is running");

  const settled = hashes(home.home);
  const again = await importFrom(home, openclaw);
  expect(again.exitCode).toBe(0);
  expect(again.stdout).toContain("nothing changed");
  expect(hashes(home.home)).toEqual(settled);

  // Doctor passes; the daemon starts on it and answers the owner on the imported bot.
  expect((await doctor(home)).filter((r) => r.status === "fail")).toEqual([]);
  await start.daemon(home);
  expect(await sender(telegram)("/soul history")).toContain("imported from OpenClaw (SOUL.md)");
});

test("the JSON5 home (comments, trailing commas, unquoted keys, an $include, a key from .env), found through OPENCLAW_STATE_DIR, imports like any other", async () => {
  const home = start.home({ OPENCLAW_STATE_DIR: fixtureCopy("json5") });
  const run = await runFermix(["import", "openclaw"], home.env);
  expect(run.exitCode).toBe(0);
  expectNoSecret(run.stdout);
  expect(run.stdout).toMatch(/imported\s+Telegram allowed senders\s+111111111, 333333333/);
  expect(run.stdout).toMatch(/by hand\s+Telegram owner\s+Choose the owner/);
  const secrets = readFileSync(join(home.home, "secrets.toml"), "utf8");
  expect(secrets).toContain(SECRETS.json5Openai);
  expect(secrets).toContain(SECRETS.json5Telegram);
  expectNoSecret(readFileSync(join(home.home, "config.toml"), "utf8"));
  expect((await doctor(home)).filter((r) => r.status === "fail")).toEqual([]);
});

test("a home with missing and broken files imports what it can and says what it could not; a broken openclaw.json fails with its file, line and reason and writes nothing", async () => {
  const home = start.home();
  const damaged = await importFrom(home, fixtureCopy("damaged"));
  expect(damaged.exitCode).toBe(0);
  expect(damaged.stdout).toMatch(/skipped\s+cron\/jobs\.json\s+does not parse \(line 2\)/);
  expect(damaged.stdout).toMatch(/skipped\s+agents\/main\/agent\/auth-profiles\.json\s+does not parse \(line 1\)/);
  expect(damaged.stdout).toMatch(/skipped\s+Telegram turned on\s+left off: no bot token was found/);
  expect(damaged.stdout).toMatch(/skipped\s+skill no-skill-file\s+it has no SKILL\.md/);
  expect(damaged.stdout).toMatch(/by hand\s+provider openai key/);
  expect(readFileSync(join(home.home, "workspace", "SOUL.md"), "utf8")).toContain("## About your owner\n\n- Name: Dana");

  const fresh = start.home();
  const broken = fixtureCopy("broken-config");
  const failed = await importFrom(fresh, broken);
  expect(failed.exitCode).toBe(1);
  expect(failed.stderr).toContain(`${join(broken, "openclaw.json")}: line 6, column 5: invalid character 'd'`);
  expect(failed.stderr).toContain("nothing was imported");
  expect(failed.stdout).toBe("");
  expect(existsSync(fresh.home)).toBe(false);
});

test("what Fermix already has is kept unless --force: a different SOUL.md and another provider are skipped and say so; --force replaces them", async () => {
  const home = start.home();
  home.writeConfig(tomlTable("fermix_core.providers.local", { base_url: "http://127.0.0.1:11434/v1", model: "llama3" }));
  const openclaw = fixtureCopy("minimal");
  const own = "# My own soul\n\nI wrote this myself.\n";
  const workspace = join(home.home, "workspace");
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "SOUL.md"), own);

  const kept = await importFrom(home, openclaw);
  expect(kept.exitCode).toBe(0);
  expect(kept.stdout).toMatch(/skipped\s+provider openai\s+Fermix already has a provider \(local\) \(--force replaces it\)/);
  expect(kept.stdout).toMatch(/skipped\s+persona \(SOUL\.md\)\s+Fermix's SOUL\.md has been changed/);
  expect(readFileSync(join(workspace, "SOUL.md"), "utf8")).toBe(own);
  expect(readFileSync(join(home.home, "config.toml"), "utf8")).not.toContain("gpt-5.1");

  const forced = await importFrom(home, openclaw, "--force");
  expect(forced.exitCode).toBe(0);
  expect(forced.stdout).toMatch(/imported\s+provider openai\s+.*\(replaced what Fermix had\)/);
  expect(readFileSync(join(workspace, "SOUL.md"), "utf8")).toContain("You are Pip");
  const config = Bun.TOML.parse(readFileSync(join(home.home, "config.toml"), "utf8")) as { fermix_core: { providers: Record<string, { primary?: boolean }> } };
  expect(config.fermix_core.providers.openai?.primary).toBe(true);
  expect(config.fermix_core.providers.local?.primary).not.toBe(true);
});

test("fermix help import and --help say what becomes what; an unknown source is a usage error", async () => {
  const home = start.home();
  const help = await runFermix(["help", "import"], home.env);
  expect(help.exitCode).toBe(0);
  expect(help.stdout).toContain("Usage: fermix import openclaw [--from DIR] [--dry-run] [--force]");
  for (const line of ["IDENTITY.md and USER.md are appended", "MEMORY.md            memory facts", "copied to workspace/memory/", "cron/jobs.json"]) {
    expect(help.stdout).toContain(line);
  }
  expect((await runFermix(["import", "--help"], home.env)).stdout).toBe(help.stdout);
  expect((await runFermix(["help"], home.env)).stdout).toMatch(/import\s+move in from OpenClaw/);
  const wrong = await runFermix(["import", "hermes"], home.env);
  expect(wrong.exitCode).toBe(2);
  expect(wrong.stderr).toContain('cannot import from "hermes"');
  const nowhere = await runFermix(["import", "openclaw"], { ...home.env, OPENCLAW_STATE_DIR: join(home.home, "no-such-openclaw") });
  expect(nowhere.exitCode).toBe(1);
  expect(nowhere.stderr).toContain("no OpenClaw home at");
});
