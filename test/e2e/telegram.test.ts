/**
 * Telegram end to end with the compiled binary: the daemon long-polls the Bot
 * API fake, the fake model answers, and the reply shows up in the user's
 * chat; a sender who is not allowed gets nothing at all.
 */
import { expect, test } from "bun:test";
import { reply } from "../fakes/model-server.ts";
import { ALICE, BOB } from "../fakes/telegram.ts";
import type { RunningDaemon } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, telegramToml } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();
/** After a streamed answer's last words are on screen: the stream's closing edit and deletion follow within milliseconds; 300 ms holds that. */
const STREAM_CLOSE_MS = 300;

/** The fake model, the Bot API fake, and a home whose Telegram (on by default) polls that fake for Alice. */
async function setup() {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF);
  return { model, telegram, home };
}

interface Health {
  status: string;
  channels: Array<{ name: string; status: string; mode: string | null; process_alive: boolean | null }>;
}

async function health(d: RunningDaemon): Promise<Health> {
  return (await (await fetch(new URL("/health/ready", d.url))).json()) as Health;
}

test("a Telegram message in, the model's answer out in the chat; an unauthorized sender gets nothing", async () => {
  const { model, telegram, home } = await setup();
  model.reply(reply.text("Hello ", "from the ", "fake model"));
  const d = await start.daemon(home);

  // Polling is up once the first getUpdates came back: health says so.
  let report = await health(d);
  const ready = async () => {
    report = await health(d);
    return report.channels.find((c) => c.name === "telegram")?.status === "ready";
  };
  await until("telegram ready in health", ready, 5000).catch(() => {});
  expect(report.channels.find((c) => c.name === "telegram")).toEqual({
    name: "telegram",
    status: "ready",
    enabled: true,
    mode: "polling",
    process_alive: true,
  } as never);

  telegram.pushMessage(telegram.message.text("hi fermix, say hello"));
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("fake model")), 10_000);
  // The presenter may render Markdown or split; the model's words arrive either way.
  expect(texts.join("\n")).toContain("Hello from the fake model");
  expect(model.requests).toHaveLength(1);
  const sent = telegram.calls("sendMessage").find((c) => String(c.body.chat_id) === String(ALICE.id))!;
  expect(sent.body.link_preview_options).toEqual({ is_disabled: true });

  // Bob is not on the allowlist: his message is received and dropped, with no reply and no model call.
  const [fromBob] = telegram.pushMessage(telegram.message.text("hello? anyone?", { from: BOB }));
  await telegram.waitForRequest("getUpdates", (r) => Number(r.body.offset) > fromBob!.update_id, 5000);
  // Dropped is the end of it: no reply and no model call can follow the drop.
  await until("Bob's message to be dropped", () => d.logs().includes("unauthorized sender dropped"), 5000);
  expect(telegram.botMessages(BOB.id)).toEqual([]);
  expect(model.requests).toHaveLength(1);
  expect(d.logs()).toContain("unauthorized sender dropped");

  expect(d.logs()).not.toContain(telegram.token);
  expect(await d.stop()).toBe(0);
}, 30_000);

test("a long streamed answer: a live draft edited in place, sealed into cards; only the first rings, no link previews, HTML", async () => {
  const { model, telegram, home } = await setup();
  // Three sections of ~800 visible characters (~2,400 in all, past the ~1,400 a card holds), streamed slowly enough to be edited.
  const section = (n: number) =>
    `## Part ${n}\n\n${Array.from({ length: 16 }, (_, i) => `Sentence ${i + 1} of part ${n} has **bold** words and a [link](https://example.com/${n}).`).join(" ")}\n\n`;
  const answer = section(1) + section(2) + section(3);
  const chunks = answer.match(/[\s\S]{1,150}/g)!;
  model.reply(reply.slow(120, ...chunks));
  await start.daemon(home);
  telegram.pushMessage(telegram.message.text("write me three parts"));
  await telegram.waitForTexts(ALICE.id, (t) => t.join("\n").includes("Sentence 16 of part 3"), 20_000);
  // The last text is in; the stream's closing calls (the last card's final edit, the status line's deletion) follow it at once.
  await Bun.sleep(STREAM_CLOSE_MS);

  const bot = telegram.chat(ALICE.id).filter((e) => e.sender === "bot" && !e.deleted);
  // More than one message, and every part of the answer visible, in order.
  expect(bot.length).toBeGreaterThan(1);
  const visible = bot.map((e) => e.text ?? "").join("\n");
  for (const n of [1, 2, 3]) expect(visible).toContain(`Part ${n}`);
  expect(visible.indexOf("Part 1")).toBeLessThan(visible.indexOf("Part 3"));
  // Cards are sealed at a section heading: each later card starts with one.
  for (const card of bot.slice(1)) expect(card.text).toMatch(/^Part \d/);
  // The draft was edited in place while the model streamed.
  expect(bot.some((e) => e.history.length > 0)).toBe(true);
  expect(telegram.calls("editMessageText").length).toBeGreaterThan(0);
  // Only the first message notifies; previews are off on every one; Markdown became Telegram HTML.
  expect(bot.map((e) => e.disable_notification === true)).toEqual(bot.map((_, i) => i > 0));
  expect(bot.every((e) => e.link_preview_disabled === true)).toBe(true);
  expect(bot.every((e) => e.parse_mode === "HTML")).toBe(true);
  expect(bot[0]!.source).toContain("<b>bold</b>");
  expect(bot[0]!.source).toContain('<a href="https://example.com/1">link</a>');
});

test("a reply Telegram rejects for its formatting is resent once as plain text, and the fault is logged", async () => {
  const { model, telegram, home } = await setup();
  // Not streamed: the whole reply goes through the outbox's send path.
  home.writeConfig(
    `${providerToml(model.url)}${telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) })}streaming = "off"\n${ACP_OFF}`,
  );
  model.reply(reply.text("Some **bold** words & a <tag>."));
  const d = await start.daemon(home);
  telegram.rejectEntitiesNext("sendMessage");
  telegram.pushMessage(telegram.message.text("format something"));
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("bold")), 10_000);
  expect(texts.filter((t) => t.includes("bold"))).toEqual(["Some bold words & a <tag>."]);
  const sends = telegram.calls("sendMessage").filter((c) => String(c.body.chat_id) === String(ALICE.id));
  expect(sends.map((c) => c.body.parse_mode ?? "none")).toEqual(["HTML", "none"]);
  expect(d.logs()).toContain("platform rejected the formatting; resending as plain text");
  expect(d.logs()).toContain("level=error");
});
