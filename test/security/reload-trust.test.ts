/**
 * Button presses are judged by the config in force when they arrive, not by
 * the one the daemon started with: after a reload that makes Bob the owner
 * instead of Alice, Alice's Approve on a request made before the change
 * grants nothing (a pending code of a former owner is void), and Bob's
 * press on a request made after it grants. The compiled binary on the
 * Telegram fake; the reload through the control socket.
 */
import { expect, test } from "bun:test";
import { lastToolOutput, reply } from "../fakes/model-server.ts";
import { ALICE, BOB, privateChat } from "../fakes/telegram.ts";
import { ACP_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { controlRequest } from "../helpers/control.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();

test("after a reload that changes the Telegram owner, the former owner's Approve grants nothing and the new owner's does", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  const config = (owner: number, allowed: number) =>
    providerToml(model.url) +
    telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(owner) }) +
    `allowed_user_ids = ["${allowed}"]\n` +
    // Alice's stale request must end by itself once nobody can answer it.
    tomlTable("fermix_core.sandbox", { access_request_timeout_seconds: 4 }) +
    ACP_OFF;
  home.writeConfig(config(ALICE.id, BOB.id));
  await start.daemon(home);
  const before = start.dataFolder();
  const after = start.dataFolder();
  model.reply(
    reply.toolCall("request_access", { path: before, mode: "ro", reason: "to read the report" }),
    (request) => reply.text(`Alice's turn: ${lastToolOutput(request)}`),
    reply.toolCall("request_access", { path: after, mode: "ro", reason: "to read the other report" }),
    (request) => reply.text(`Bob's turn: ${lastToolOutput(request)}`),
  );

  telegram.pushMessage(telegram.message.text("read my report"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("Access request")), 10_000);
  const alicesPrompt = telegram.botMessages(ALICE.id).find((e) => (e.text ?? "").includes("Access request"))!;

  home.writeConfig(config(BOB.id, ALICE.id));
  expect(await controlRequest(home.home, { type: "reload" })).toMatchObject({ type: "reloaded", result: { ok: true } });

  const approve = (prompt: typeof alicesPrompt) => (prompt.reply_markup!.inline_keyboard.flat()[0] as { callback_data: string }).callback_data;
  const byAlice = telegram.pressButton(ALICE.id, alicesPrompt.message_id, { from: ALICE, data: approve(alicesPrompt) });
  expect((await telegram.waitForCallbackAnswer(byAlice)).text).toContain("not yours");
  // Nobody can answer it now: the turn that asked ends without access.
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("Alice's turn:")), 15_000);
  expect(lastToolOutput(model.requests[1]!)).toStartWith("timed out");

  telegram.pushMessage(telegram.message.text("read the other one", { from: BOB, chat: privateChat(BOB) }));
  await telegram.waitForTexts(BOB.id, (texts) => texts.some((t) => t.includes("Access request")), 10_000);
  const bobsPrompt = telegram.botMessages(BOB.id).find((e) => (e.text ?? "").includes("Access request"))!;
  const byBob = telegram.pressButton(BOB.id, bobsPrompt.message_id, { from: BOB, data: approve(bobsPrompt) });
  expect((await telegram.waitForCallbackAnswer(byBob)).text).toContain("Approved");
  await telegram.waitForTexts(BOB.id, (texts) => texts.some((t) => t.startsWith("Bob's turn:")), 10_000);
  expect(lastToolOutput(model.requests[3]!)).toStartWith("granted: read-only access");

  // What was granted: only Bob's folder.
  telegram.pushMessage(telegram.message.text("/sandbox", { from: BOB, chat: privateChat(BOB) }));
  await telegram.waitForTexts(BOB.id, (texts) => texts.some((t) => t.includes("Grants")), 10_000);
  const status = telegram.visibleTexts(BOB.id).find((t) => t.includes("Grants"))!;
  expect(status).toContain(after);
  expect(status).not.toContain(before);
});
