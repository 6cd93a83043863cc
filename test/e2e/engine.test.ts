/**
 * The one turn engine as a person meets it, with the compiled binary and the
 * loopback fakes: a refused key reads as the key on either wire format, as
 * an HTTP 401 or as an error inside a stream that began with 200 (the owner
 * needs `fermix doctor`, not "try again"); a model that says a few words and
 * then stalls shows the "still waiting" status, which goes when it speaks
 * again; and the telemetry the seed names for replies and commands is there.
 */
import { expect, test } from "bun:test";
import { reply } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import { ACP_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();

/** The auth message as the Telegram chat shows it (its Markdown rendered). */
const AUTH_WORDS = "The model provider refused the key. Please run fermix doctor";

for (const api of ["responses", "chat"] as const) {
  test(`${api}: an invalid key, as HTTP 401 or inside a 200 stream, gives the auth message, in a turn and in /background work`, async () => {
    const model = await start.model();
    const telegram = start.telegram();
    const home = start.home();
    home.writeConfig(
      providerToml(model.url, { api, apiKey: "sk-not-a-real-key-000" }) +
        telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
        ACP_OFF,
    );
    await start.daemon(home);
    model.reply(
      reply.status(401, "Incorrect API key provided: sk-not-a-*****000", undefined, "invalid_api_key"),
      reply.error("Incorrect API key provided", "invalid_api_key"),
      reply.error("Incorrect API key provided", "invalid_api_key"),
    );
    telegram.pushMessage(telegram.message.text("hello?"));
    await telegram.waitForTexts(ALICE.id, (texts) => texts.filter((t) => t.includes(AUTH_WORDS)).length === 1, 10_000);
    telegram.pushMessage(telegram.message.text("hello again?"));
    await telegram.waitForTexts(ALICE.id, (texts) => texts.filter((t) => t.includes(AUTH_WORDS)).length === 2, 10_000);
    telegram.pushMessage(telegram.message.text("/bg look it up"));
    await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("Background task #1 failed")), 10_000);
    const texts = telegram.visibleTexts(ALICE.id);
    expect(texts.find((t) => t.startsWith("Background task #1 failed"))).toContain(AUTH_WORDS);
    for (const text of texts) {
      expect(text).not.toContain("had an error on its side");
      expect(text).not.toContain("Incorrect API key");
    }
  });
}

test("a model that writes a few words and then stalls shows the waiting status, removed when it goes on", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      tomlTable("fermix_core.delivery", { waiting_notice_ms: 800 }) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      ACP_OFF,
  );
  await start.daemon(home);
  // "Well," is under the draft's 30-character opening: before this engine, the reader saw nothing for the whole stall.
  model.reply(reply.stutter("Well,", 4000, " after some thought: the answer is forty-two, as it always was."));
  telegram.pushMessage(telegram.message.text("what is the answer?"));
  await until("the waiting status", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Still waiting for the model")), 8000);
  await until("the answer", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("forty-two")), 10_000);
  await until("the status to go", () => !telegram.visibleTexts(ALICE.id).some((t) => t.includes("Still waiting")), 5000);
  // The request's first words came before the stall: the status was shown after them, not before the first token.
  expect(model.requests).toHaveLength(1);
});

test("telemetry: channel.reply for every message sent, command.received and command.dispatch for every command", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home({ FERMIX_LOG_LEVEL: "debug" });
  home.writeConfig(providerToml(model.url) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF);
  const daemon = await start.daemon(home);
  model.reply(reply.text("Hello, Alice."));
  telegram.pushMessage(telegram.message.text("hi"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("Hello, Alice."), 10_000);
  telegram.pushMessage(telegram.message.text("/whoami"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("Your id on")), 10_000);
  await until("the dispatch event", () => daemon.logs().includes("event=command.dispatch"));
  const logs = daemon.logs();
  expect(logs).toMatch(/msg=telemetry event=channel\.reply channel=telegram[^\n]* ok=true/);
  expect(logs.match(/msg=telemetry event=channel\.reply channel=telegram/g)!.length).toBeGreaterThanOrEqual(2);
  expect(logs).toMatch(/msg=telemetry event=command\.received channel=telegram command=whoami/);
  expect(logs).toMatch(/msg=telemetry event=command\.dispatch channel=telegram command=whoami ok=true duration_ms=/);
});
