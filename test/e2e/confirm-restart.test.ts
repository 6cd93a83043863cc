/**
 * Confirmation codes across a restart of the compiled daemon, on the
 * Telegram fake: a `/sandbox` proposal made before the restart is confirmed
 * after it by its owner, once, and the change takes effect; an access
 * request whose waiting turn died with the daemon is refused in plain words
 * and grants nothing; a code made by an in-process `fermix ask` is answered
 * from another process, and the waiting turn goes on.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import { ensureBinary, runFermix } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();
const TOKEN = /\/confirm ([A-HJKMNP-Z2-9]{8})/;

/** The daemon polling the Telegram fake, Alice the owner. */
async function setup() {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      tomlTable("fermix_core.sandbox", { access_request_timeout_seconds: 120 }) +
      ACP_OFF,
  );
  const daemon = await start.daemon(home);
  /** Alice sends `text` and waits for the bot's next message that `match`es. */
  const say = async (text: string, match: (reply: string) => boolean) => {
    const before = telegram.visibleTexts(ALICE.id).length;
    telegram.pushMessage(telegram.message.text(text));
    const texts = await telegram.waitForTexts(ALICE.id, (t) => t.slice(before).some(match), 15_000);
    return texts.slice(before).find(match)!;
  };
  return { model, telegram, home, daemon, say };
}

test("a /sandbox network on proposal outlives a restart: its owner confirms it afterwards, once, and the network is on", async () => {
  const { home, daemon, say } = await setup();
  const proposal = await say("/sandbox network on", (t) => t.includes("Risky change"));
  const token = TOKEN.exec(proposal)?.[1];
  expect(token).toBeDefined();

  expect(await daemon.stop("SIGTERM")).toBe(0);
  await start.daemon(home);

  expect(await say(`/confirm ${token}`, (t) => t.includes("Network"))).toContain("Network on for commands.");
  expect(await say("/sandbox", (t) => t.includes("Network for commands"))).toContain("Network for commands: on (set with /sandbox network)");
  expect(await say(`/confirm ${token}`, (t) => t.includes("code"))).toContain("That code was already used (approved); a code works once.");
});

test("a rw grant proposed before a SIGKILL is confirmed after the restart, by its owner, once", async () => {
  const { home, daemon, say } = await setup();
  const data = realpathSync(mkdtempSync(join("/var/tmp", "fermix-e2e-notes-")));
  start.defer(() => rmSync(data, { recursive: true, force: true }));
  const token = TOKEN.exec(await say(`/grant ${data} rw`, (t) => t.includes("Risky change")))?.[1];
  expect(token).toBeDefined();

  await daemon.stop("SIGKILL");
  await start.daemon(home);

  expect(await say(`/confirm ${token}`, (t) => t.includes("Granted") || t.includes("code"))).toBe(`Granted: read-write access to ${data}.`);
  expect(await say("/sandbox", (t) => t.includes("Grants"))).toContain(`${data} read-write — by telegram:${ALICE.id}`);
  expect(await say(`/confirm ${token}`, (t) => t.includes("code"))).toContain("already used");
});

for (const signal of ["SIGKILL", "SIGTERM"] as const) {
  test(`an access request whose turn died with the daemon (${signal}): after the restart its code is refused in plain words and grants nothing`, async () => {
    const { model, telegram, home, daemon, say } = await setup();
    const data = realpathSync(mkdtempSync(join("/var/tmp", "fermix-e2e-data-")));
    writeFileSync(join(data, "report.txt"), "Q3 revenue: 42 units\n");
    start.defer(() => rmSync(data, { recursive: true, force: true }));
    model.reply(
      reply.toolCall("request_access", { path: data, mode: "ro", reason: "to read the Q3 report" }),
      // The unfinished turn replays after the restart; this time the model answers without asking.
      reply.text("I could not read it; ask me again if you like."),
    );
    const prompt = await say("read my Q3 report", (t) => t.includes("Access request"));
    const token = TOKEN.exec(prompt)?.[1];
    expect(token).toBeDefined();

    await daemon.stop(signal);
    await start.daemon(home);

    expect(await say(`/confirm ${token}`, (t) => t.includes("request"))).toBe("That request ended when the assistant restarted; ask again.");
    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("ask me again")), 15_000);
    expect(await say("/sandbox", (t) => t.includes("Grants"))).toMatch(/Grants\s+• none/);
    expect(await say(`/confirm ${token}`, (t) => t.includes("request"))).toBe("That request ended when the assistant restarted; ask again.");
  });
}

test("a code made by an in-process fermix ask is answered by another fermix ask, and the waiting turn goes on", async () => {
  const model = await start.model();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "responses", apiKey: "sk-fake-0000" }) +
      CHANNELS_OFF +
      tomlTable("fermix_core.sandbox", { access_request_timeout_seconds: 120 }),
  );
  const data = realpathSync(mkdtempSync(join("/var/tmp", "fermix-e2e-data-")));
  writeFileSync(join(data, "report.txt"), "Q3 revenue: 42 units\n");
  start.defer(() => rmSync(data, { recursive: true, force: true }));
  model.reply(
    reply.toolCall("request_access", { path: data, mode: "ro", reason: "to read the Q3 report" }),
    reply.toolCall("read_file", { path: join(data, "report.txt") }),
    reply.text("Q3 revenue was 42 units."),
  );
  const asking = Bun.spawn([ensureBinary(), "ask", "how did Q3 go?"], { env: home.env as Record<string, string>, stdout: "pipe", stderr: "pipe" });
  start.defer(() => asking.exitCode === null && asking.kill("SIGKILL"));
  let shown = "";
  const reader = asking.stdout.getReader();
  const decoder = new TextDecoder();
  while (!TOKEN.test(shown)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`fermix ask ended without a code: ${shown}`);
    shown += decoder.decode(value);
  }
  const token = TOKEN.exec(shown)![1]!;

  const answer = await runFermix(["ask", `/confirm ${token}`], home.env);
  expect(answer.stdout).toContain(`Approved: read-only access to ${data}`);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    shown += decoder.decode(value);
  }
  expect(await asking.exited).toBe(0);
  expect(shown).toContain("Q3 revenue was 42 units.");
  expect((await runFermix(["ask", `/confirm ${token}`], home.env)).stdout).toContain("already used (approved)");
});
