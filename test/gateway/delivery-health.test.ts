/**
 * Health from sends, and what counts as the chat taking calls: a message
 * that goes through ends the channel's trouble; typing, reactions and
 * deletes show that the chat takes calls but say nothing about messages; a
 * channel without typing proves nothing by "typing"; a failure is the
 * caller's to judge and passes through.
 */
import { expect, test } from "bun:test";
import { SendHealth, watchedPort } from "../../src/gateway/delivery/health.ts";
import { SendFailed } from "../../src/message/index.ts";
import { FakeClock } from "../helpers/clock.ts";
import { scriptedPlatform } from "../helpers/delivery.ts";
import { TARGET } from "../store/fixtures/outbox-reply.ts";

const OTHER = { chatId: "43" };

test("a message through a watched port ends the trouble; typing and a reaction show only that the chat is reached", async () => {
  const time = new FakeClock(1_000_000);
  const health = new SendHealth(time.now);
  const p = scriptedPlatform(time.now);
  const port = watchedPort("telegram", TARGET, p.port, health);
  health.failed("telegram", { transient: true, status: 502, reason: "HTTP 502" });
  const before = time.now();
  await time.advance(1000);
  await port.typing();
  await port.react("17", "👍");
  expect(health.reachedSince("telegram", TARGET, before)).toBe(true);
  expect(health.reachedSince("telegram", OTHER, before)).toBe(false);
  expect(health.trouble("telegram")).toBe("sends failing for 1 min: server error (HTTP 502); retrying");
  await port.sendText({ text: "hello", notify: true, linkPreview: false, plain: true });
  expect(health.trouble("telegram")).toBeUndefined();
});

test("on a channel without typing, its typing call proves nothing; a failed call is passed up and proves nothing either", async () => {
  const time = new FakeClock(1_000_000);
  const health = new SendHealth(time.now);
  const p = scriptedPlatform(time.now, { typing: false });
  p.script.refuse = (call) => (call.op === "react" ? new SendFailed("HTTP 500", true, 500) : undefined);
  const port = watchedPort("whatsapp", TARGET, p.port, health);
  const before = time.now();
  await time.advance(1000);
  await port.typing();
  await expect(port.react("wamid.1", "👍")).rejects.toThrow("HTTP 500");
  expect(health.reachedSince("whatsapp", TARGET, before)).toBe(false);
});

test("a refusal that cannot heal does not put the channel in trouble", () => {
  const health = new SendHealth(() => 0);
  health.failed("slack", { transient: false, status: 403, reason: "HTTP 403" });
  expect(health.isFailing("slack")).toBe(false);
});

test("a channel coming out of trouble is heard once, also when a watched port's message is what went through first", async () => {
  const time = new FakeClock(1_000_000);
  const recovered: string[] = [];
  const health = new SendHealth(time.now, (channel) => recovered.push(channel));
  const port = watchedPort("telegram", TARGET, scriptedPlatform(time.now).port, health);
  health.failed("telegram", { transient: true, status: 502, reason: "HTTP 502" });
  await port.sendText({ text: "hello", notify: true, linkPreview: false, plain: true });
  // The recorded part's own report after the port's finds the channel already well: nothing more is said.
  health.delivered("telegram", TARGET);
  expect(recovered).toEqual(["telegram"]);
  await port.sendText({ text: "again", notify: true, linkPreview: false, plain: true });
  expect(recovered).toEqual(["telegram"]);
});
