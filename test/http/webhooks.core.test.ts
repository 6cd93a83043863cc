/** Webhooks into a real core: idempotency under concurrency, capacity, albums, and what the model sees. */
import { afterEach, expect, test } from "bun:test";
import { dmEvent, envelope, USER } from "../channels/slack/fixtures.ts";
import { message, messagesPayload, SENDER } from "../channels/whatsapp/fixtures.ts";
import { type FakeModel, lastInputParts, reply, startFakeModel } from "../fakes/model-server.ts";
import { CHANNELS_OFF, OPENAI_TEST, providerToml, slackToml, whatsappToml } from "../helpers/config.ts";
import { nowSeconds, signSlack, signWhatsApp } from "../helpers/sign.ts";
import { until } from "../helpers/wait.ts";
import { type WebhookCore, webhookCore } from "../helpers/webhook-core.ts";

const SLACK_SECRET = "slack-signing-secret-0001";
const WA_SECRET = "wa-app-secret-0001";
/** Both webhook channels, owned by the fixtures' senders so that every fixture message becomes a turn. */
const config = (modelUrl: string, debounceMs = 150) =>
  providerToml(modelUrl, OPENAI_TEST) +
  CHANNELS_OFF +
  slackToml({ botToken: "xoxb-test-token", signingSecret: SLACK_SECRET, ownerUserId: USER }) +
  whatsappToml({
    accessToken: "wa-access-token",
    phoneNumberId: "106540352242922",
    verifyToken: "verify-me",
    appSecret: WA_SECRET,
    ownerUserId: SENDER,
    albumDebounceMs: debounceMs,
  });

let fake: FakeModel;
let harness: WebhookCore;
afterEach(async () => {
  await harness?.close();
  await fake?.stop();
});

const slackPost = (h: WebhookCore, event: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const body = JSON.stringify(envelope(event, extra));
  return h.post("/webhook/slack", body, signSlack(body, SLACK_SECRET, nowSeconds()));
};

/**
 * How long after a turn's reply a duplicate turn would have asked the model:
 * it would wait behind the first in the same conversation's queue and start
 * the moment that one ended, so its request follows the reply within
 * milliseconds; 300 ms holds that on a loaded machine.
 */
const DUPLICATE_TURN_MS = 300;

test("20 concurrent deliveries of one Slack message: all answered 200, exactly one turn, one reply", async () => {
  fake = await startFakeModel();
  fake.reply(reply.text("only once"));
  harness = await webhookCore(config(fake.url));
  const event = dmEvent({ text: "hello", ts: "1700000001.000100" });
  const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => slackPost(harness, event, { event_id: `Ev${i}` })));
  expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
  await until("the reply", () => harness.sent.length === 1);
  await Bun.sleep(DUPLICATE_TURN_MS);
  expect(fake.requests).toHaveLength(1);
  expect(harness.sent.map((s) => s.text)).toEqual(["only once"]);
});

test("the 200 comes back before a slow turn finishes", async () => {
  fake = await startFakeModel();
  fake.reply(reply.hang());
  harness = await webhookCore(config(fake.url));
  const res = await slackPost(harness, dmEvent({ text: "take your time" }));
  expect(res.status).toBe(200);
  await fake.waitForRequests(1);
  expect(harness.sent).toEqual([]);
});

test("at capacity the route answers 503 and forgets the key, so the platform's retry gets through", async () => {
  fake = await startFakeModel();
  fake.reply(reply.hang(), reply.text("second answered"));
  harness = await webhookCore(config(fake.url), { handoffCapacity: 1 });
  expect((await slackPost(harness, dmEvent({ text: "first", ts: "1.1" }))).status).toBe(200);
  const busy = await slackPost(harness, dmEvent({ text: "second", ts: "2.2" }));
  expect(busy.status).toBe(503);
  expect(await busy.json()).toEqual({ error: "Webhook handoff unavailable" });
  expect(harness.core.idempotency.seen("slack", "D0442US94JD:2.2")).toBe(false);
  // The first turn ends (stopped once it is really running: its request reached the model),
  // capacity frees, and Slack's retry of the second is a fresh message.
  await fake.waitForRequests(1);
  harness.core.queue.stop("slack:D0442US94JD:");
  await until("capacity", () => harness.core.supervisor.inFlight === 0);
  expect((await slackPost(harness, dmEvent({ text: "second", ts: "2.2" }), { event_id: "EvRetry" })).status).toBe(200);
  await until("the second reply", () => harness.sent.some((s) => s.text === "second answered"));
});

test("a WhatsApp album: images from one sender merge into one turn; a following text waits for it", async () => {
  fake = await startFakeModel();
  fake.reply(reply.text("two pictures"), reply.text("and the text"));
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
  harness = await webhookCore(config(fake.url), { media: () => ({ bytes: png, mime: "image/png" }) });
  const post = async (...messages: Record<string, unknown>[]) => {
    const body = JSON.stringify(messagesPayload(...messages));
    return harness.post("/webhook/whatsapp", body, signWhatsApp(body, WA_SECRET));
  };
  expect((await post(message("wamid.a1", "image", { image: { id: "media-1", mime_type: "image/png", caption: "left" } }))).status).toBe(200);
  expect((await post(message("wamid.a2", "image", { image: { id: "media-2", mime_type: "image/png", caption: "right" } }))).status).toBe(200);
  expect((await post(message("wamid.t1", "text", { text: { body: "which is better?" } }))).status).toBe(200);
  await until("both replies", () => harness.sent.length === 2);
  expect(harness.sent.map((s) => s.text)).toEqual(["two pictures", "and the text"]);
  const first = lastInputParts(fake.requests[0]!);
  expect(first.filter((c) => c.type === "input_image")).toHaveLength(2);
  expect(first.find((c) => c.type === "input_text")!.text).toBe("left\nright");
  expect(lastInputParts(fake.requests[1]!)[0]?.text).toBe("which is better?");
});

test("a failed album dispatch forgets every part's key, so redelivery runs again", async () => {
  fake = await startFakeModel();
  fake.reply(reply.text("worked the second time"));
  harness = await webhookCore(config(fake.url), { media: () => ({ bytes: new Uint8Array([1]), mime: "image/png" }) });
  // The dispatch itself fails once (as a database error would), after the 200 was sent.
  const ingest = harness.core.gateway.ingest.bind(harness.core.gateway);
  let failures = 1;
  harness.core.gateway.ingest = async (...args) => {
    if (failures-- > 0) throw new Error("database is locked");
    return ingest(...args);
  };
  const body = JSON.stringify(
    messagesPayload(
      message("wamid.b1", "image", { image: { id: "m1", mime_type: "image/png" } }),
      message("wamid.b2", "image", { image: { id: "m2", mime_type: "image/png" } }),
    ),
  );
  expect((await harness.post("/webhook/whatsapp", body, signWhatsApp(body, WA_SECRET))).status).toBe(200);
  await until("keys forgotten", () => !harness.core.idempotency.seen("whatsapp", "wamid.b1") && !harness.core.idempotency.seen("whatsapp", "wamid.b2"));
  expect(harness.core.inbox.pending()).toEqual([]);
  expect((await harness.post("/webhook/whatsapp", body, signWhatsApp(body, WA_SECRET))).status).toBe(200);
  await until("the reply", () => harness.sent.some((s) => s.text === "worked the second time"));
  expect(fake.requests).toHaveLength(1);
});

test("an image that cannot be downloaded gets a reply saying so, and no turn", async () => {
  fake = await startFakeModel();
  harness = await webhookCore(config(fake.url), {
    media: () => {
      throw new Error("media server down");
    },
  });
  const body = JSON.stringify(messagesPayload(message("wamid.d1", "image", { image: { id: "m1", mime_type: "image/png" } })));
  expect((await harness.post("/webhook/whatsapp", body, signWhatsApp(body, WA_SECRET))).status).toBe(200);
  await until("the reply", () => harness.sent.length === 1);
  expect(harness.sent[0]!.text).toContain("couldn't download that image (media server down)");
  expect(fake.requests).toHaveLength(0);
});

test("a channel.webhook telemetry event per accepted batch counts fresh and duplicate messages", async () => {
  fake = await startFakeModel();
  fake.fallback(reply.text("ok"));
  harness = await webhookCore(config(fake.url));
  const events: Array<{ fresh: number; duplicate: number; channel: string }> = [];
  harness.core.telemetry.on("channel.webhook", (e) => events.push({ ...e.measurements, channel: e.metadata.channel }));
  const body = JSON.stringify(messagesPayload(message("wamid.c1", "text", { text: { body: "a" } }), message("wamid.c2", "text", { text: { body: "b" } })));
  await harness.post("/webhook/whatsapp", body, signWhatsApp(body, WA_SECRET));
  await harness.post("/webhook/whatsapp", body, signWhatsApp(body, WA_SECRET));
  expect(events.map(({ fresh, duplicate, channel }) => ({ fresh, duplicate, channel }))).toEqual([
    { fresh: 2, duplicate: 0, channel: "whatsapp" },
    { fresh: 0, duplicate: 2, channel: "whatsapp" },
  ]);
});
