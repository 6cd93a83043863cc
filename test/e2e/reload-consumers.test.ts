/**
 * One live config: after a reload, every consumer that outlives it acts on
 * the new config, not the one the daemon started with — trust (a sender
 * added to the allowlist is answered), the owner's time zone and the sandbox
 * settings (what the next turn's tools say), the default job target (where
 * the next job delivers) and streaming (the next reply is a live draft).
 * Button presses are proven in test/security/reload-trust.test.ts. The
 * compiled binary on the Telegram fake; the reload through the control socket.
 */
import { expect, test } from "bun:test";
import { lastToolOutput, type RecordedRequest, reply } from "../fakes/model-server.ts";
import { ALICE, BOB, privateChat } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { controlRequest } from "../helpers/control.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();

/** The description of one offered tool in a recorded request. */
const described = (request: RecordedRequest, name: string): string => (request.body.tools ?? []).find((t) => t.name === name)?.description ?? "";

test("after a reload: trust, the time zone, the sandbox settings, the default job target and streaming are the new ones", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  const config = (o: { timezone: string; timeout: number; target: number; allowed: string[]; streaming: string }) =>
    tomlTable("fermix_core", { timezone: o.timezone }) +
    providerToml(model.url) +
    tomlTable("fermix_core.sandbox", { command_timeout_seconds: o.timeout }) +
    tomlTable("fermix_core.jobs", { default_target: `telegram:${o.target}` }) +
    telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id), allowedUserIds: o.allowed }) +
    `streaming = "${o.streaming}"\n` +
    ACP_OFF;
  home.writeConfig(config({ timezone: "UTC", timeout: 30, target: ALICE.id, allowed: [], streaming: "off" }));
  await start.daemon(home);
  const schedule = (text: string) => [
    reply.toolCall("schedule", { when: "in 2 hours", request: text }),
    (request: RecordedRequest) => reply.text(`scheduled: ${lastToolOutput(request)}`),
  ];

  // Before: Bob is nobody; the tools speak of UTC and 30 s; a command-line job goes to Alice.
  telegram.pushMessage(telegram.message.text("hello?", { from: BOB, chat: privateChat(BOB) }));
  model.reply(...schedule("water the plants"));
  const first = await runFermix(["ask", "remind me to water the plants"], home.env);
  expect(first.stdout).toContain(`scheduled:`);
  expect(described(model.requests[0]!, "schedule")).toContain("Times are in UTC");
  expect(described(model.requests[0]!, "run_command")).toContain("at most 30");
  expect(lastToolOutput(model.requests[1]!)).toContain(`telegram chat ${ALICE.id}`);
  // Bob's message, sent first, cost no model request.
  expect(model.requests).toHaveLength(2);

  home.writeConfig(config({ timezone: "Asia/Tokyo", timeout: 7, target: BOB.id, allowed: [String(BOB.id)], streaming: "draft" }));
  expect(await controlRequest(home.home, { type: "reload" })).toMatchObject({ type: "reloaded", result: { ok: true } });

  // Trust: Bob is on the allowlist now, and answered.
  model.reply(reply.text("Hi Bob."));
  telegram.pushMessage(telegram.message.text("hello again", { from: BOB, chat: privateChat(BOB) }));
  await telegram.waitForTexts(BOB.id, (texts) => texts.includes("Hi Bob."), 10_000);

  // The time zone, the sandbox's timeout and the default target: the next turn's tools, and where its job goes.
  model.reply(...schedule("feed the cat"));
  const second = await runFermix(["ask", "remind me to feed the cat"], home.env);
  expect(second.stdout).toContain("scheduled:");
  const turn = model.requests.at(-2)!;
  expect(described(turn, "schedule")).toContain("Times are in Asia/Tokyo");
  expect(described(turn, "run_command")).toContain("at most 7");
  expect(lastToolOutput(model.requests.at(-1)!)).toContain(`telegram chat ${BOB.id}`);

  // Streaming: the next reply is a draft, edited in place as the model writes.
  const edits = telegram.calls("editMessageText").length;
  model.reply(reply.slow(150, "A first sentence that is long enough to open a draft. ", "A second one follows. ", "And a third."));
  telegram.pushMessage(telegram.message.text("tell me three things"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("And a third.")), 10_000);
  await until("an edit of the draft", () => telegram.calls("editMessageText").length > edits);
});

test("after a reload: the waiting status's delay and the model's vision are the new ones", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  const config = (o: { waitingMs: number; vision: boolean }) =>
    providerToml(model.url, { vision: o.vision }) +
    tomlTable("fermix_core.delivery", { waiting_notice_ms: o.waitingMs }) +
    telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
    ACP_OFF;
  home.writeConfig(config({ waitingMs: 600_000, vision: true }));
  await start.daemon(home);
  // Before: a photo reaches the model.
  model.reply(reply.text("A cat on a sofa."));
  telegram.pushMessage(telegram.message.photo({ caption: "what is this?" }));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("A cat on a sofa."), 10_000);

  home.writeConfig(config({ waitingMs: 500, vision: false }));
  expect(await controlRequest(home.home, { type: "reload" })).toMatchObject({ type: "reloaded", result: { ok: true } });

  // The waiting status now shows after half a second of silence (before, ten minutes).
  model.reply(reply.stutter("Hmm,", 2500, " let me answer: yes."));
  telegram.pushMessage(telegram.message.text("is it?"));
  await until("the waiting status", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Still waiting for the model")), 8000);
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("let me answer: yes.")), 10_000);
  // A photo is now refused in plain words, and costs no model request.
  const requests = model.requests.length;
  telegram.pushMessage(telegram.message.photo({ caption: "and this?" }));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("I can't look at images")), 10_000);
  expect(model.requests).toHaveLength(requests);
});
