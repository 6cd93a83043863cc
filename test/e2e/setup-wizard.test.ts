/**
 * `fermix setup` as a person uses it: the compiled binary in a real terminal
 * (tmux), against the fake model (found on a probed port) and the Telegram
 * fake. The wizard configures the provider, Telegram with owner pairing and
 * transcription; the daemon started afterwards is ready, answers the paired
 * owner and finds its secrets in secrets.toml. Then `--reconfigure` pairs a
 * new owner through that running daemon, changing that one value only.
 * The last step installs the service (fake systemctl on PATH). Pairing
 * that hears nothing within --pair-timeout falls back to a typed id; the
 * WhatsApp and Slack steps show the webhook URL to register and the
 * FERMIX_HTTP_BIND reminder.
 */
import { expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { reply } from "../fakes/model-server.ts";
import { ALICE, BOB } from "../fakes/telegram.ts";
import { BINARY, ensureBinary, type RunningDaemon, runFermix } from "../helpers/binary.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import { makeFakeBin } from "../helpers/fake-bin.ts";
import { startTerminal, type TerminalSession } from "../helpers/tmux.ts";

const start = e2eResources();
const TRANSCRIPTION_KEY = "sk-transcribe-test-0000";

async function healthOf(d: RunningDaemon) {
  return (await (await fetch(new URL("/health/ready", d.url))).json()) as { status: string; channels: Array<{ name: string; status: string }> };
}

function terminal(command: string[], env: Record<string, string | undefined>): TerminalSession {
  const session = startTerminal(command, env);
  start.defer(() => session.close());
  return session;
}

test("the wizard: provider, Telegram paired by a message, transcription; then the daemon is ready and answers the owner; --reconfigure changes only the owner", async () => {
  ensureBinary();
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home({ FERMIX_SETUP_PROBES: `127.0.0.1:${model.port}` });
  const screens: string[] = [];
  const see = async (w: TerminalSession, text: string | RegExp, timeoutMs?: number) => {
    const screen = await w.waitFor(text, timeoutMs);
    screens.push(screen);
    return screen;
  };

  const w = terminal([BINARY, "setup", "--telegram-api-root", telegram.url, "--no-service"], home.env);
  expect(await see(w, "Which model provider?")).toContain(`OpenAI-compatible server at ${model.url}`);
  w.keys("Enter");
  await see(w, "Which model?");
  w.keys("Enter");
  await see(w, "API key (leave empty if the server needs none)");
  w.keys("Enter");
  await see(w, "Does the model understand images");
  w.keys("Enter");
  await see(w, "Context window, in tokens");
  w.keys("Enter");
  await see(w, "Check the connection now");
  w.keys("Enter");
  await see(w, `${model.url} answers and has fake-model`);
  await see(w, "Which channels should Fermix serve?");
  w.keys("Enter");
  await see(w, "Bot token (from @BotFather)");
  w.type(telegram.token);
  w.keys("Enter");
  await see(w, "The token belongs to @fermix_test_bot");
  await see(w, "Who owns this bot?");
  w.keys("Enter");
  await see(w, "Waiting for a message to @fermix_test_bot");
  telegram.pushMessage(telegram.message.text("it's me, pair me"));
  await see(w, "Make Alice Liddell (@alice), id 111111111, the owner?");
  w.keys("Enter");
  await see(w, "Which speech-to-text backend transcribes voice notes?");
  w.keys("Enter");
  await see(w, "Model (empty: the backend's default)");
  w.keys("Enter");
  await see(w, "API key (leave empty to use the openai provider's key");
  w.type(TRANSCRIPTION_KEY);
  w.keys("Enter");
  // Realtime voice, offered through the provider just chosen: turned on.
  await see(w, /Talk with Fermix live, by voice[\s\S]*Turn it on, through local/);
  w.keys("Down", "Enter");
  await see(w, "Web search for the assistant?");
  w.keys("Enter");
  await see(w, "Let the assistant drive a desktop");
  w.keys("Left", "Enter");
  await see(w, "Which display?");
  w.keys("Enter");
  const review = await see(w, "Write them?");
  expect(review).toContain("fermix_core.realtime.enabled = true");
  expect(review).toContain('fermix_channels.telegram.owner_user_id = "111111111"');
  expect(review).toContain("fermix_core.computer.enabled = true");
  expect(review).toContain("fermix_channels.telegram.bot_token = (secret, to secrets.toml)");
  w.keys("Enter");
  expect(await w.exited()).toBe(0);
  expect(await see(w, "Done. Next: `fermix run`")).toContain("Stored 2 secrets in");

  // What the wizard wrote: config.toml without a credential, the credentials in the 0600 fallback store.
  const config = readFileSync(join(home.home, "config.toml"), "utf8");
  const secrets = readFileSync(join(home.home, "secrets.toml"), "utf8");
  expect(config).not.toContain(telegram.token);
  expect(config).not.toContain(TRANSCRIPTION_KEY);
  expect(secrets).toContain(telegram.token);
  expect(secrets).toContain(TRANSCRIPTION_KEY);
  expect(statSync(join(home.home, "config.toml")).mode & 0o777).toBe(0o600);
  expect(statSync(join(home.home, "secrets.toml")).mode & 0o777).toBe(0o600);
  expect(Bun.TOML.parse(config)).toMatchObject({
    fermix_core: {
      providers: { local: { base_url: model.url, model: "fake-model", api: "chat", primary: true } },
      transcription: { backend: "openai", model: "gpt-4o-mini-transcribe" },
      computer: { enabled: true },
      realtime: { enabled: true },
    },
    fermix_channels: { telegram: { enabled: true, owner_user_id: String(ALICE.id), api_root: telegram.url } },
  });
  for (const screen of screens) expect(screen).not.toContain(telegram.token);

  // The daemon started afterwards: ready, and it answers the paired owner (the pairing message itself is not answered).
  const d = await start.daemon(home);
  await until("the daemon to be ready", async () => (await healthOf(d)).status === "ready", 8000).catch(() => {});
  expect((await healthOf(d)).status).toBe("ready");
  model.reply(reply.text("Hello Alice, set up and running"));
  telegram.pushMessage(telegram.message.text("are you there?"));
  expect((await telegram.waitForTexts(ALICE.id, (t) => t.length > 0, 10_000)).join("\n")).toContain("Hello Alice, set up and running");
  expect(model.requests).toHaveLength(1);

  // --reconfigure while the daemon polls the same token: pairing goes through the daemon, and only the owner changes.
  const before = readFileSync(join(home.home, "config.toml"), "utf8");
  const r = terminal([BINARY, "setup", "--reconfigure", "--no-service"], home.env);
  expect(await see(r, "Which model provider?")).toContain("Keep local (fake-model)");
  r.keys("Enter");
  await see(r, "Which channels should Fermix serve?");
  r.keys("Enter");
  await see(r, "Bot token (from @BotFather) (leave empty to keep the stored one)");
  r.keys("Enter");
  await see(r, "Who owns this bot?");
  r.keys("Enter");
  await see(r, "Waiting for a message to @fermix_test_bot");
  // The daemon waits for a sender once it has read the wizard's request, which may come after the screen
  // says so; a stranger's message before that is only dropped. Bob writes again until the wizard names him.
  // The daemon knows the sender's name, not the @username.
  const named = "Make Bob, id 222222222, the owner?";
  let nextWrite = 0;
  await until(
    "the wizard to name Bob",
    () => {
      if (Date.now() >= nextWrite) {
        telegram.pushMessage(telegram.message.text("me too", { from: BOB }));
        nextWrite = Date.now() + 250;
      }
      return r.screen().includes(named);
    },
    10_000,
  );
  await see(r, named);
  r.keys("Enter");
  await see(r, /Which speech-to-text backend[\s\S]*Keep openai, gpt-4o-mini-transcribe, key set/);
  r.keys("Enter");
  await see(r, "Talk with Fermix live, by voice");
  r.keys("Enter");
  await see(r, /Web search for the assistant\?[\s\S]*No web search for now/);
  r.keys("Enter");
  // Computer use is on now: keeping it asks which display, and keeping that changes nothing.
  await see(r, "Let the assistant drive a desktop");
  r.keys("Enter");
  await see(r, /Which display\?[\s\S]*A private virtual display/);
  r.keys("Enter");
  const changes = await see(r, "Write them?");
  expect(changes).toContain('fermix_channels.telegram.owner_user_id = "222222222"');
  expect(changes.slice(changes.lastIndexOf("Changes to"))).not.toContain("fermix_core");
  r.keys("Enter");
  expect(await r.exited()).toBe(0);
  expect(await see(r, "the running daemon reloaded: health ready")).toContain("channels: telegram restarted");

  const after = readFileSync(join(home.home, "config.toml"), "utf8");
  expect(after).toBe(before.replace(`owner_user_id = "${ALICE.id}"`, `owner_user_id = "${BOB.id}"`));
  expect(readFileSync(join(home.home, "config.toml.bak"), "utf8")).toBe(before);
  expect(readFileSync(join(home.home, "secrets.toml"), "utf8")).toBe(secrets);
  expect(telegram.botMessages(BOB.id)).toEqual([]);

  // The new owner is answered by the reloaded daemon, without a restart.
  model.reply(reply.text("Hello Bob"));
  telegram.pushMessage(telegram.message.text("now me", { from: BOB }));
  expect((await telegram.waitForTexts(BOB.id, (t) => t.length > 0, 10_000)).join("\n")).toContain("Hello Bob");
  expect(await d.stop()).toBe(0);
}, 90_000);

test("the wizard's channel steps: Telegram pairing that hears nothing says so and takes a typed id; WhatsApp and Slack show the webhook URL and the FERMIX_HTTP_BIND reminder", async () => {
  ensureBinary();
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home({ FERMIX_SETUP_PROBES: `127.0.0.1:${model.port}` });
  const w = terminal([BINARY, "setup", "--telegram-api-root", telegram.url, "--no-service", "--pair-timeout", "2"], home.env);
  await w.waitFor("Which model provider?");
  w.keys("Enter");
  await w.waitFor("Which model?");
  w.keys("Enter");
  await w.waitFor("API key (leave empty if the server needs none)");
  w.keys("Enter");
  await w.waitFor("Does the model understand images");
  w.keys("Enter");
  await w.waitFor("Context window, in tokens");
  w.keys("Enter");
  await w.waitFor("Check the connection now");
  w.keys("Left", "Enter");
  await w.waitFor("Which channels should Fermix serve?");
  // Telegram is on already; add WhatsApp and Slack.
  w.keys("Down", "Space", "Down", "Space", "Enter");
  await w.waitFor("Bot token (from @BotFather)");
  w.type(telegram.token);
  w.keys("Enter");
  await w.waitFor("Who owns this bot?");
  w.keys("Enter");
  await w.waitFor("Waiting for a message to @fermix_test_bot (send it from your Telegram account; 2 s)");
  // Nobody writes to the bot: after 2 s the wizard says so and asks for the id instead.
  const typed = await w.waitFor("Owner id (empty: set it later", 10_000);
  expect(typed).toContain("No message arrived in 2 s");
  expect(wrapped(typed)).toContain("For Telegram it is a number; @userinfobot tells you yours.");
  w.type(String(ALICE.id));
  w.keys("Enter");

  await w.waitFor("Cloud API access token");
  w.type("EAAG-wizard-whatsapp-token");
  w.keys("Enter");
  await w.waitFor("Phone number id");
  w.type("1234567890");
  w.keys("Enter");
  await w.waitFor("Webhook verify token");
  w.type("wizard-verify-token");
  w.keys("Enter");
  await w.waitFor("App secret (signs the webhooks)");
  w.type("wizard-app-secret");
  w.keys("Enter");
  await w.waitFor(/For WhatsApp it is your number[\s\S]*◆ {2}Owner id \(empty/);
  w.type("15550001111");
  w.keys("Enter");
  await w.waitFor("WhatsApp webhook");

  await w.waitFor("Bot token (xoxb-…)");
  w.type("xoxb-wizard-slack-token");
  w.keys("Enter");
  await w.waitFor("Signing secret");
  w.type("wizard-signing-secret");
  w.keys("Enter");
  await w.waitFor(/For Slack it is your member id[\s\S]*◆ {2}Owner id \(empty/);
  w.type("U0OWNER01");
  w.keys("Enter");
  await w.waitFor("Slack Events API");
  await w.waitFor("Which speech-to-text backend transcribes voice notes?");
  const notes = wrapped(w.screen());
  for (const channel of ["whatsapp", "slack"]) {
    expect(notes).toContain(
      `Register https://<your public host>/webhook/${channel} with the platform, served by a TLS reverse proxy that forwards to http://127.0.0.1:4030/webhook/${channel}.`,
    );
  }
  expect(notes).toContain("The daemon listens on 127.0.0.1; set FERMIX_HTTP_BIND (or [fermix_core.http] bind) to an address the proxy reaches.");
  expect(notes).toContain("Subscribe to message.im and app_mention.");
  w.keys("Down", "Down", "Down", "Enter");
  await w.waitFor("Talk with Fermix live, by voice");
  w.keys("Enter");
  await w.waitFor("Web search for the assistant?");
  w.keys("Enter");
  await w.waitFor("Let the assistant drive a desktop");
  w.keys("Enter");
  const review = await w.waitFor("Write them?");
  expect(review).toContain(`fermix_channels.telegram.owner_user_id = "${ALICE.id}"`);
  w.keys("Enter");
  expect(await w.exited()).toBe(0);
  const done = await w.waitFor("Done.");
  for (const secret of [
    telegram.token,
    "EAAG-wizard-whatsapp-token",
    "wizard-verify-token",
    "wizard-app-secret",
    "xoxb-wizard-slack-token",
    "wizard-signing-secret",
  ]) {
    expect(done).not.toContain(secret);
  }
  expect(Bun.TOML.parse(readFileSync(join(home.home, "config.toml"), "utf8"))).toMatchObject({
    fermix_channels: {
      telegram: { enabled: true, owner_user_id: String(ALICE.id) },
      whatsapp: { enabled: true, owner_user_id: "15550001111", phone_number_id: "1234567890" },
      slack: { enabled: true, owner_user_id: "U0OWNER01" },
    },
  });
  // The pairing long-polled Telegram, which had nothing for it.
  expect(telegram.calls("getUpdates").length).toBeGreaterThan(0);
  expect(telegram.calls("getUpdates").length).toBeLessThanOrEqual(3);
}, 60_000);

/** A screen's text with clack's box borders and line wrapping taken out, for reading a wrapped note as one line. */
function wrapped(screen: string): string {
  return screen
    .split("\n")
    .map((line) => line.replace(/^[\s│◇◆●○■▲]*/u, "").replace(/[\s│]*$/u, ""))
    .join(" ")
    .replace(/\s+/g, " ");
}

test("without a terminal, setup refuses the wizard and points at the flags", async () => {
  const home = start.home();
  const proc = Bun.spawn([ensureBinary(), "setup"], { env: home.env as Record<string, string>, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(2);
  expect(stderr).toContain("setup asks its questions in a terminal, and this is not one");
  expect(stderr).toContain("--yes");
});

test("--reconfigure keeping every answer writes nothing, and the last step installs the service (fake systemctl on PATH)", async () => {
  const fake = makeFakeBin();
  start.defer(() => fake.cleanup());
  const home = start.home({ PATH: fake.path, USER: "alice", FERMIX_SETUP_PROBES: "127.0.0.1:9" });
  const flags = await runFermix(
    [
      "setup",
      "--yes",
      "--model",
      "gpt-5.1",
      "--api-key",
      "sk-aaaaaaaaaaaa",
      "--slack-owner",
      "U1",
      "--slack-bot-token",
      "xoxb-1",
      "--slack-signing-secret",
      "s3cr3tt",
    ],
    home.env,
  );
  expect(flags.exitCode).toBe(0);
  const config = readFileSync(join(home.home, "config.toml"), "utf8");

  const w = terminal([BINARY, "setup", "--reconfigure"], home.env);
  expect(await w.waitFor("Which model provider?")).toContain("Keep openai (gpt-5.1)");
  w.keys("Enter");
  expect(await w.waitFor("Which channels should Fermix serve?")).toContain("Slack (now: on, owner U1)");
  w.keys("Enter");
  await w.waitFor("Bot token (xoxb-…) (leave empty to keep the stored one)");
  w.keys("Enter");
  await w.waitFor("Signing secret (leave empty to keep the stored one)");
  w.keys("Enter");
  await w.waitFor("Owner id (empty: set it later");
  w.keys("Enter");
  await w.waitFor("Slack Events API");
  await w.waitFor("Which speech-to-text backend transcribes voice notes?");
  w.keys("Down", "Down", "Down");
  w.keys("Enter");
  await w.waitFor("Talk with Fermix live, by voice");
  w.keys("Enter");
  await w.waitFor("Web search for the assistant?");
  w.keys("Enter");
  await w.waitFor("Let the assistant drive a desktop");
  w.keys("Enter");
  await w.waitFor("Nothing to change in config.toml.");
  await w.waitFor("Run Fermix in the background, now and at every login or boot (a systemd user service)?");
  w.keys("Left");
  w.keys("Enter");
  expect(await w.exited()).toBe(0);
  const screen = await w.waitFor("Done. Fermix runs as a service");
  expect(screen).toContain("enabled and started fermix.service");
  expect(screen).toContain("loginctl enable-linger alice");
  expect(readFileSync(join(home.home, "config.toml"), "utf8")).toBe(config);
  expect(readFileSync(join(home.env.HOME!, ".config", "systemd", "user", "fermix.service"), "utf8")).toContain(`ExecStart="${BINARY}" run`);
  expect(fake.calls()).toEqual([
    "systemctl --user daemon-reload",
    "systemctl --user enable fermix.service",
    "systemctl --user restart fermix.service",
    "loginctl show-user alice --property=Linger",
  ]);
}, 60_000);
