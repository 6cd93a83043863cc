/**
 * `fermix setup --yes` from the compiled binary: every channel configured by
 * flags alone, without contacting any service; a bad flag fails with the
 * very message the config loader gives for the same value in config.toml,
 * and writes nothing; --reconfigure changes what it names and keeps the rest;
 * --check asks the provider and Telegram first. With a daemon running, setup
 * has it reload and shows the health that results: a new owner applies at
 * once, a new bind address is named as needing a restart.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "../fakes/model-server.ts";
import { ALICE, BOB } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, telegramToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();

const SECRETS = {
  "--api-key": "sk-provider-key-0001",
  "--telegram-bot-token": "7000000001:AAFakeFermixTestTokenxxxxxxxxxxxxxxx",
  "--whatsapp-access-token": "EAAG-whatsapp-token-0002",
  "--whatsapp-verify-token": "verify-token-0003",
  "--whatsapp-app-secret": "app-secret-0004",
  "--slack-bot-token": "xoxb-slack-token-0005",
  "--slack-signing-secret": "slack-signing-0006",
  "--discord-bot-token": "discord-token-0007",
  "--transcription-api-key": "dg-transcribe-0008",
};

interface Row {
  check: string;
  status: string;
  detail: string;
}

test("--yes configures every channel from flags alone: credentials in secrets.toml, the rest in config.toml, nothing contacted", async () => {
  const telegram = start.telegram();
  const slack = start.slack();
  const whatsapp = start.whatsapp();
  const home = start.home();
  const args = [
    "setup",
    "--yes",
    "--provider-base-url",
    "https://api.openai.com/v1",
    "--model",
    "gpt-5.1",
    "--context-window",
    "400000",
    "--telegram-owner",
    "111111111",
    "--telegram-api-root",
    telegram.url,
    "--whatsapp-phone-number-id",
    "1234567890",
    "--whatsapp-owner",
    "15550001111",
    `--whatsapp-graph-api-base=${whatsapp.graphBase()}`,
    "--slack-owner",
    "U0OWNER",
    "--slack-api-url",
    slack.apiUrl,
    "--discord-owner",
    "80351110224678912",
    "--discord-bot-user-id",
    "80351110224678913",
    "--signal-account",
    "+15550002222",
    "--signal-owner",
    "+15550003333",
    "--transcription-backend",
    "deepgram",
    "--transcription-model",
    "nova-3",
    "--computer-enabled",
    "true",
    "--computer-display",
    "virtual",
    ...Object.entries(SECRETS).flat(),
  ];
  const r = await runFermix(args, home.env);
  expect(r.stderr).toBe("");
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toContain(`wrote ${join(home.home, "config.toml")}`);
  expect(r.stdout).toContain(`stored 9 secrets in ${join(home.home, "secrets.toml")}`);
  expect(r.stdout).toContain("no daemon is running: start it with `fermix run`");
  for (const value of Object.values(SECRETS)) expect(r.stdout).not.toContain(value);

  const config = readFileSync(join(home.home, "config.toml"), "utf8");
  const secrets = readFileSync(join(home.home, "secrets.toml"), "utf8");
  for (const value of Object.values(SECRETS)) {
    expect(config).not.toContain(value);
    expect(secrets).toContain(value);
  }
  expect(Bun.TOML.parse(config)).toMatchObject({
    fermix_core: {
      providers: { openai: { base_url: "https://api.openai.com/v1", model: "gpt-5.1", api: "responses", primary: true, context_window: 400000 } },
      transcription: { backend: "deepgram", model: "nova-3" },
      computer: { enabled: true, display: "virtual" },
    },
    fermix_channels: {
      telegram: { enabled: true, owner_user_id: "111111111" },
      whatsapp: { enabled: true, phone_number_id: "1234567890", owner_user_id: "15550001111" },
      slack: { enabled: true, owner_user_id: "U0OWNER" },
      discord: { enabled: true, owner_user_id: "80351110224678912", bot_user_id: "80351110224678913" },
      signal: { enabled: true, account: "+15550002222", owner_user_id: "+15550003333" },
    },
  });
  // Flags with --yes contact nothing: no getMe, no Slack or WhatsApp call.
  expect(telegram.requests).toHaveLength(0);
  expect(slack.requests).toHaveLength(0);
  expect(whatsapp.requests).toHaveLength(0);

  // What the loader makes of it, as doctor reports: every channel complete, secrets from the file store.
  const doctor = await runFermix(["doctor", "--json"], home.env);
  const rows = (JSON.parse(doctor.stdout) as { rows: Row[] }).rows;
  for (const name of ["telegram", "whatsapp", "slack", "discord", "signal"]) {
    expect(rows.find((row) => row.check === `channel ${name}`)).toEqual({
      check: `channel ${name}`,
      status: "ok",
      detail: "enabled, credentials and owner/allowlist set",
    });
  }
  expect(rows.find((row) => row.check === "provider openai")?.status).toBe("ok");
  expect(rows.find((row) => row.check === "transcription")).toEqual({
    check: "transcription",
    status: "ok",
    detail: "deepgram (nova-3) via https://api.deepgram.com/v1: api key set",
  });
  // Computer use, on a virtual display: the tools it needs are found (CI installs them).
  expect(rows.find((row) => row.check === "computer use")).toEqual({
    check: "computer use",
    status: "ok",
    detail: "virtual display 1280×800; found Xvfb, xauth, xprop, xdotool, import",
  });
  expect(r.stdout).toContain("computer use:  on, a virtual display 1280×800");
});

test("a bad flag fails with the config loader's own message (the flag named), and nothing is written", async () => {
  const home = start.home();
  const r = await runFermix(
    ["setup", "--yes", "--model", "m", "--provider-base-url", "ftp://models.example", "--telegram-enabled", "maybe", "--http-port", "70000"],
    home.env,
  );
  expect(r.exitCode).toBe(1);
  expect(r.stdout).toBe("");
  expect(existsSync(join(home.home, "config.toml"))).toBe(false);
  expect(existsSync(join(home.home, "secrets.toml"))).toBe(false);
  expect(r.stderr).toContain("(set by --provider-base-url)");
  expect(r.stderr).toContain("(set by --telegram-enabled)");
  expect(r.stderr).toContain("(set by --http-port)");
  expect(r.stderr).toContain("nothing was written");

  // The same values written by hand: `fermix run` refuses them with the same lines.
  home.writeConfig(
    `[fermix_core.providers.custom]\nmodel = "m"\nbase_url = "ftp://models.example"\n\n[fermix_core.http]\nport = 70000\n\n[fermix_channels.telegram]\nenabled = "maybe"\n`,
  );
  const loader = await runFermix(["run"], home.env);
  expect(loader.exitCode).toBe(1);
  const issues = loader.stderr.split("\n").filter((line) => line.startsWith("  "));
  expect(issues.sort()).toEqual([
    '  fermix_channels.telegram.enabled = "maybe" is not valid: expected true or false',
    "  fermix_core.http.port = 70000 is not valid: expected an integer at least 0 and at most 65535",
    '  fermix_core.providers.custom.base_url = "ftp://models.example" is not valid: expected an http(s) URL',
  ]);
  for (const line of issues) expect(r.stderr).toContain(`${line}\n`);
});

test("an existing config changes only with --reconfigure, which keeps every key and comment it is not told about", async () => {
  const home = start.home();
  const first = await runFermix(["setup", "--yes", "--model", "gpt-5.1", "--api-key", "sk-first-000000", "--slack-owner", "U1"], home.env);
  expect(first.exitCode).toBe(0);
  const path = join(home.home, "config.toml");
  const handEdited = `${readFileSync(path, "utf8")}\n# my own note\n[fermix_core.compaction]\nthreshold = 0.6 # earlier\n`;
  home.writeConfig(handEdited);

  const refused = await runFermix(["setup", "--yes", "--model", "gpt-6"], home.env);
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr).toContain(`${path} exists; add --reconfigure to change it`);
  expect(readFileSync(path, "utf8")).toBe(handEdited);

  const changed = await runFermix(["setup", "--yes", "--reconfigure", "--model", "gpt-6"], home.env);
  expect(changed.exitCode).toBe(0);
  expect(readFileSync(path, "utf8")).toBe(handEdited.replace('model = "gpt-5.1"', 'model = "gpt-6"'));
  expect(readFileSync(`${path}.bak`, "utf8")).toBe(handEdited);
  expect(readFileSync(join(home.home, "secrets.toml"), "utf8")).toContain("sk-first-000000");
});

test("--check asks the provider and Telegram before writing; a failure is named and nothing is written", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  const unreachable = await runFermix(["setup", "--yes", "--check", "--provider-base-url", "http://127.0.0.1:9/v1", "--model", "m"], home.env);
  expect(unreachable.exitCode).toBe(1);
  expect(unreachable.stderr).toContain("check failed: provider custom: cannot reach http://127.0.0.1:9/v1/models");
  expect(existsSync(join(home.home, "config.toml"))).toBe(false);

  const wrongModel = await runFermix(["setup", "--yes", "--check", "--provider-base-url", model.url, "--model", "no-such-model"], home.env);
  expect(wrongModel.stderr).toContain('the server does not list the model "no-such-model" (it has: fake-model)');

  const badToken = await runFermix(
    [
      "setup",
      "--yes",
      "--check",
      "--provider-base-url",
      model.url,
      "--model",
      "fake-model",
      "--telegram-bot-token",
      "1:wrong",
      "--telegram-api-root",
      telegram.url,
      "--telegram-owner",
      "1",
    ],
    home.env,
  );
  expect(badToken.exitCode).toBe(1);
  expect(badToken.stderr).toContain("check failed: telegram: Telegram refused the bot token");
  expect(badToken.stderr).not.toContain("1:wrong");

  const ok = await runFermix(
    [
      "setup",
      "--yes",
      "--check",
      "--provider-base-url",
      model.url,
      "--model",
      "fake-model",
      "--telegram-bot-token",
      telegram.token,
      "--telegram-api-root",
      telegram.url,
      "--telegram-owner",
      "1",
    ],
    home.env,
  );
  expect(ok.exitCode).toBe(0);
  expect(ok.stdout).toContain(`check: provider custom: ${model.url} answers and lists fake-model`);
  expect(ok.stdout).toContain("check: telegram: the token belongs to @fermix_test_bot");
  expect(telegram.calls("getMe")).toHaveLength(2);
});

test("with a daemon running, setup --yes has it reload: a new owner is answered at once; a new bind address says a restart is required", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF);
  const daemon = await start.daemon(home);

  const owner = await runFermix(["setup", "--yes", "--reconfigure", "--telegram-owner", String(BOB.id)], home.env);
  expect(owner.stderr).toBe("");
  expect(owner.exitCode).toBe(0);
  expect(owner.stdout).toContain("the running daemon reloaded: health ready\n  channels: telegram restarted\n");
  expect(owner.stdout).not.toContain("restart required");
  model.reply(reply.text("Hello Bob, you own me now"));
  telegram.pushMessage(telegram.message.text("am I the owner?", { from: BOB }));
  expect((await telegram.waitForTexts(BOB.id, (t) => t.length > 0, 10_000)).join("\n")).toContain("Hello Bob, you own me now");

  // The daemon's PORT=0 (environment) outranks the file's port, so the address is what changes here.
  const bind = await runFermix(["setup", "--yes", "--reconfigure", "--http-bind", "127.0.0.2"], home.env);
  expect(bind.exitCode).toBe(0);
  expect(bind.stdout).toContain("the running daemon reloaded: health ready");
  expect(bind.stdout).toContain(
    "  restart required to apply: listen on 127.0.0.2:0 (now 127.0.0.1:0) (fermix service install restarts the service, or restart `fermix run`)\n",
  );
  // Until then it keeps serving where it was.
  const health = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as Record<string, unknown>;
  expect(health["restart_required?"]).toBe(true);
  expect(daemon.proc.exitCode).toBeNull();
}, 30_000);

test("an unknown flag is a usage error", async () => {
  const home = start.home();
  const r = await runFermix(["setup", "--yes", "--telegram-tokn", "x"], home.env);
  expect(r.exitCode).toBe(2);
  expect(r.stderr).toContain('unknown option "--telegram-tokn"');
});

test("--pair-timeout is the wizard's: documented in --help, a whole number of seconds, refused with --yes", async () => {
  const home = start.home();
  const help = await runFermix(["setup", "--help"], home.env);
  expect(help.stdout).toContain("--pair-timeout S   how long Telegram pairing waits for your message before");
  const zero = await runFermix(["setup", "--pair-timeout", "0"], home.env);
  expect(zero.exitCode).toBe(2);
  expect(zero.stderr).toContain('--pair-timeout "0" is not valid: expected a whole number of seconds from 1 to 3600');
  const withYes = await runFermix(["setup", "--yes", "--pair-timeout=30", "--model", "m"], home.env);
  expect(withYes.exitCode).toBe(2);
  expect(withYes.stderr).toContain("--pair-timeout goes with the wizard");
  expect(existsSync(join(home.home, "config.toml"))).toBe(false);
});
