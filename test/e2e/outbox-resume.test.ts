/**
 * The outbox through the compiled daemon: a three-message reply, the daemon
 * SIGKILLed while Telegram holds the answer to the second message (it was
 * delivered; the daemon never heard so). After a restart the third message is
 * sent, the second is not sent again, and the turn is not run again.
 */
import { expect, test } from "bun:test";
import { reply } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import { ACP_OFF, providerToml, telegramToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();
/** After the last section arrived, how long nothing more may: a part sent twice would follow at once; 300 ms holds that. */
const NOTHING_MORE_MS = 300;

test("SIGKILL mid-reply: after restart no part is sent twice and none is lost", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  // Not streamed, so the whole reply is recorded in the outbox before its first part is sent.
  home.writeConfig(
    `${providerToml(model.url)}${telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) })}streaming = "off"\n${ACP_OFF}`,
  );
  // Three sections, each too long to share a 4,096-character message with another.
  const section = (n: number) => `## Section ${n}\n\n${`Line of section ${n}, long enough to fill the message. `.repeat(48)}`;
  model.reply(reply.text([1, 2, 3].map(section).join("\n\n")));

  const hold = telegram.holdAnswer("sendMessage", 1);
  const first = await start.daemon(home);
  telegram.pushMessage(telegram.message.text("write three sections"));
  // The second message reached Telegram (it is in the chat) but its answer is held: kill the daemon now.
  await telegram.waitForRequest("sendMessage", (r) => String(r.body.text ?? "").includes("Section 2"), 15_000);
  await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("Section 2")));
  expect(await first.stop("SIGKILL")).not.toBe(0);
  hold.release();
  expect(telegram.visibleTexts(ALICE.id).some((t) => t.includes("Section 3"))).toBe(false);

  await start.daemon(home);
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("Section 3")), 15_000);
  // A part sent twice would follow the last one at once (the outbox sends a chat's parts back to back).
  await Bun.sleep(NOTHING_MORE_MS);
  const final = telegram.visibleTexts(ALICE.id);
  expect(final).toEqual(texts);
  for (const n of [1, 2, 3]) expect(final.filter((t) => t.includes(`Section ${n}`))).toHaveLength(1);
  expect(final.map((t) => t.match(/Section (\d)/)?.[1])).toEqual(["1", "2", "3"]);
  // The turn itself was finished before the kill: the model was asked once.
  expect(model.requests).toHaveLength(1);
});
