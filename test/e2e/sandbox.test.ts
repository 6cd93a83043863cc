/**
 * The workspace tools end to end with the compiled binary: the fake model
 * asks to run `ls` and read a file and gets the real output; a command run
 * by the daemon sees none of the daemon's secrets; on Telegram the agent's
 * access request carries Approve/Deny buttons, a tap by the owner grants the
 * access and the waiting turn goes on, a tap by anyone else is refused, and
 * in a group the prompt carries no code.
 */
import { expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastToolOutput, reply } from "../fakes/model-server.ts";
import { ALICE, BOB, groupChat } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();

test("fermix ask: the model runs ls and reads a file in the workspace, gets the real output, and answers", async () => {
  const model = await start.model();
  const home = start.home({ OPENAI_API_KEY: "sk-daemon-env-secret-0123456789", TELEGRAM_BOT_TOKEN: "7000000009:AAenvTokenNeverForCommandsXXXXXX" });
  home.writeConfig(providerToml(model.url, { api: "responses", apiKey: "sk-config-secret-9876543210" }) + CHANNELS_OFF);
  const workspace = join(home.home, "workspace");
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  writeFileSync(join(workspace, "shopping.md"), "- oat milk\n- coffee beans\n");

  model.reply(
    reply.toolCall("run_command", { command: "ls" }),
    reply.toolCall("read_file", { path: "shopping.md" }),
    reply.toolCall("run_command", { command: ["env"] }),
    reply.text("You need oat milk and coffee beans."),
  );
  const r = await runFermix(["ask", "what is on my shopping list?"], home.env);
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toContain("You need oat milk and coffee beans.");
  expect(model.requests).toHaveLength(4);

  const ls = lastToolOutput(model.requests[1]!);
  expect(ls).toStartWith("exit code 0");
  expect(ls).toContain("shopping.md");
  expect(ls).toContain("SOUL.md");
  expect(lastToolOutput(model.requests[2]!)).toBe("- oat milk\n- coffee beans\n");
  const env = lastToolOutput(model.requests[3]!);
  expect(env).toContain(`HOME=${realpathSync(workspace)}`);
  for (const secret of ["sk-daemon-env-secret", "AAenvTokenNeverForCommands", "sk-config-secret"]) expect(env).not.toContain(secret);
  expect(model.requests[0]!.body.tools!.map((t) => t.name)).toEqual(expect.arrayContaining(["read_file", "run_command", "request_access"]));
});

/** The daemon polling the Telegram fake, Alice the owner and Bob an allowed user. */
async function telegramDaemon() {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      `allowed_user_ids = ["${BOB.id}"]\n` +
      tomlTable("fermix_core.sandbox", { access_request_timeout_seconds: 60 }) +
      ACP_OFF,
  );
  const daemon = await start.daemon(home);
  return { model, telegram, home, daemon };
}

test("Telegram, in a group: the prompt has Approve and Deny and no code; Bob's tap is refused, Alice's grants and the turn goes on", async () => {
  const { model, telegram, daemon } = await telegramDaemon();
  const data = start.dataFolder();
  model.reply(
    reply.toolCall("request_access", { path: data, mode: "ro", reason: "to read the Q3 report" }),
    reply.toolCall("read_file", { path: join(data, "report.txt") }),
    reply.text("Q3 revenue was 42 units."),
  );
  const group = groupChat();
  // In a group the owner's turns ask for nothing until the owner switches that on there.
  telegram.pushMessage(telegram.message.text("/sandbox chat on", { chat: group }));
  const proposal = await waitForBotMessage(telegram, group.id, (text) => text.includes("/confirm"));
  telegram.pushMessage(telegram.message.text(`/confirm ${/\/confirm ([A-Z0-9]{8})/.exec(proposal.text!)![1]}`, { chat: group }));
  await waitForBotMessage(telegram, group.id, (text) => text.startsWith("On: in this chat"));
  telegram.pushMessage(telegram.message.text("how did Q3 go?", { chat: group }));

  const prompt = await waitForBotMessage(telegram, group.id, (text) => text.includes("Access request"));
  expect(prompt.text).toContain(data);
  expect(prompt.text).toContain("to read the Q3 report");
  expect(prompt.text).not.toContain("/confirm");
  expect(prompt.text).not.toMatch(/\b[A-HJKMNP-Z2-9]{8}\b/);
  const buttons = prompt.reply_markup!.inline_keyboard.flat();
  expect(buttons.map((b) => b.text)).toEqual(["✅ Approve", "✖️ Deny"]);
  const approve = (buttons[0] as { callback_data: string }).callback_data;

  const byBob = telegram.pressButton(group.id, prompt.message_id, { from: BOB, data: approve });
  expect((await telegram.waitForCallbackAnswer(byBob)).text).toContain("not yours");
  expect(model.requests).toHaveLength(1);

  const byAlice = telegram.pressButton(group.id, prompt.message_id, { from: ALICE, data: approve });
  expect((await telegram.waitForCallbackAnswer(byAlice)).text).toContain("Approved");
  await telegram.waitForTexts(group.id, (texts) => texts.some((t) => t.includes("42 units")), 10_000);
  expect(lastToolOutput(model.requests[1]!)).toStartWith("granted: read-only access");
  expect(lastToolOutput(model.requests[2]!)).toBe("Q3 revenue: 42 units\n");
  // The buttons have served: they are taken off the prompt.
  expect(telegram.chat(group.id).find((e) => e.message_id === prompt.message_id)!.reply_markup).toEqual({ inline_keyboard: [] });
  expect(daemon.logs()).toContain("tool=request_access");
  expect(daemon.logs()).not.toContain(telegram.token);
});

test("Telegram, in the owner's DM: the prompt shows the code too, and a typed /confirm answers the waiting turn at once", async () => {
  const { model, telegram } = await telegramDaemon();
  const data = start.dataFolder();
  model.reply(reply.toolCall("request_access", { path: data, mode: "ro", reason: "to read the Q3 report" }), reply.text("Read it, thanks."));
  telegram.pushMessage(telegram.message.text("read my Q3 report"));
  const prompt = await waitForBotMessage(telegram, ALICE.id, (text) => text.includes("Access request"));
  const token = /\/confirm ([A-Z0-9]{8})/.exec(prompt.text ?? "")?.[1];
  expect(token).toBeDefined();
  expect(prompt.reply_markup!.inline_keyboard.flat()).toHaveLength(2);

  telegram.pushMessage(telegram.message.text(`/confirm ${token}`));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("Read it, thanks.")), 10_000);
  expect(telegram.visibleTexts(ALICE.id).some((t) => t.startsWith("Approved"))).toBe(true);
  expect(lastToolOutput(model.requests[1]!)).toStartWith("granted");
});

async function waitForBotMessage(telegram: ReturnType<typeof start.telegram>, chatId: number, match: (text: string) => boolean) {
  await telegram.waitForTexts(chatId, (texts) => texts.some(match), 10_000);
  return telegram.botMessages(chatId).find((e) => match(e.text ?? ""))!;
}
