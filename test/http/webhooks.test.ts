/**
 * The webhook routes against real signed requests, through the app (no port):
 * every failure reason of docs/http.md's table with its status and body, the
 * challenges, and a fuzz run. Turns are observed at the `submit` hand-off.
 */
import { describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import { parseConfigText, resolveConfig } from "../../src/config/load.ts";
import { GATEWAY_CHANNELS } from "../../src/config/schema.ts";
import { WEBHOOKS, webhookRoutes } from "../../src/http/webhooks/index.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import type { GatewayChannel } from "../../src/message/index.ts";
import { HandoffUnavailable, type Submission } from "../../src/message/index.ts";
import { DOC_BODY, DOC_SECRET, DOC_SIGNATURE, DOC_TIMESTAMP, dmEvent, envelope, messageEvent, URL_VERIFICATION, USER } from "../channels/slack/fixtures.ts";
import { message, messagesPayload, OFFICIAL_EXAMPLE_SECRET, OFFICIAL_EXAMPLE_SIGNATURE, OFFICIAL_TEXT_EXAMPLE, SENDER } from "../channels/whatsapp/fixtures.ts";
import { type SlackOptions, slackToml, whatsappToml } from "../helpers/config.ts";
import { mutateBytes, randomJson, rng } from "../helpers/fuzz.ts";
import { signSlack, signWhatsApp } from "../helpers/sign.ts";

const SLACK_SECRET = "slack-signing-secret-0001";
const NOW = 1_780_000_000;
/** Slack as these tests sign for it, owned by the fixtures' sender; a test that varies one field spreads this. */
const SLACK: SlackOptions = { botToken: "xoxb-test-token", signingSecret: SLACK_SECRET, ownerUserId: USER };
/** Both webhook channels; WhatsApp's app secret is the one its official example vector was signed with. */
const configured = (slack: SlackOptions = SLACK) =>
  slackToml(slack) +
  whatsappToml({
    accessToken: "wa-access-token",
    phoneNumberId: "106540352242922",
    verifyToken: "verify-me-please",
    appSecret: OFFICIAL_EXAMPLE_SECRET,
    ownerUserId: SENDER,
    // The official example was sent in June 2025; these tests' clock is a year later.
    maxMessageAgeHours: 24 * 365,
  });
const CONFIGURED = configured();

const quiet = new Logger({ write() {} }, "error", new Redactor());

function routes(toml: string, submit?: (channel: GatewayChannel, items: Submission[]) => Promise<unknown>, now = NOW) {
  const config = resolveConfig({ file: parseConfigText(toml, "c"), env: {}, secrets: {}, filePath: "c" }).config;
  const submitted: Array<{ channel: GatewayChannel; items: Submission[] }> = [];
  const app = webhookRoutes({
    config,
    log: quiet,
    nowSeconds: () => now,
    submit: submit ?? (async (channel, items) => void submitted.push({ channel, items })),
  });
  const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
    app.handle(new Request(`http://fermix.test${path}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } }));
  const get = (path: string) => app.handle(new Request(`http://fermix.test${path}`));
  return { app, post, get, submitted };
}

async function expectReply(res: Response, status: number, body: unknown) {
  expect(res.status).toBe(status);
  expect(await res.json()).toEqual(body);
}
const UNAUTHORIZED = { error: "Unauthorized" };
const INVALID = { error: "Invalid webhook" };

describe("POST /webhook/slack", () => {
  const dm = JSON.stringify(envelope(dmEvent({ text: "hi" })));

  test("Slack's published signing example verifies exactly (then its form body is an unsupported transport)", async () => {
    const { post, submitted } = routes(configured({ ...SLACK, signingSecret: DOC_SECRET }), undefined, Number(DOC_TIMESTAMP));
    const res = await post("/webhook/slack", DOC_BODY, {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": DOC_TIMESTAMP,
      "x-slack-signature": DOC_SIGNATURE,
    });
    // Past the signature check (401 would mean it failed): a signed slash-command form is not an Events API delivery.
    await expectReply(res, 400, INVALID);
    expect(submitted).toEqual([]);
  });

  test("a signed message event is accepted at once with {ok:true} and handed off", async () => {
    const { post, submitted } = routes(CONFIGURED);
    await expectReply(await post("/webhook/slack", dm, signSlack(dm, SLACK_SECRET, NOW)), 200, { ok: true });
    expect(submitted).toHaveLength(1);
    expect(submitted[0]!.channel).toBe("slack");
    expect(submitted[0]!.items[0]!.message).toMatchObject({ channel: "slack", text: "hi", senderId: "U2CERLKJA" });
  });

  test("url_verification is answered with the challenge and never reaches the agent", async () => {
    const { post, submitted } = routes(CONFIGURED);
    const body = JSON.stringify(URL_VERIFICATION);
    const res = await post("/webhook/slack", body, signSlack(body, SLACK_SECRET, NOW));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(URL_VERIFICATION.challenge);
    expect(submitted).toEqual([]);
  });

  const cases: Array<[string, () => Record<string, string>, string?]> = [
    ["forged signature", () => ({ ...signSlack(dm, SLACK_SECRET, NOW), "x-slack-signature": `v0=${"0".repeat(64)}` })],
    ["altered body", () => signSlack(dm, SLACK_SECRET, NOW), dm.replace('"hi"', '"hj"')],
    ["wrong secret", () => signSlack(dm, "another-secret", NOW)],
    ["stale timestamp (301 s old)", () => signSlack(dm, SLACK_SECRET, NOW - 301)],
    ["future-skewed timestamp (301 s ahead)", () => signSlack(dm, SLACK_SECRET, NOW + 301)],
    ["missing signature", () => ({ "x-slack-request-timestamp": String(NOW) })],
    ["missing timestamp", () => ({ "x-slack-signature": signSlack(dm, SLACK_SECRET, NOW)["x-slack-signature"]! })],
    ["malformed signature", () => ({ ...signSlack(dm, SLACK_SECRET, NOW), "x-slack-signature": "v0=zz" })],
  ];
  for (const [name, headers, body] of cases) {
    test(`${name}: 401 {"error":"Unauthorized"}, nothing handed off`, async () => {
      const { post, submitted } = routes(CONFIGURED);
      await expectReply(await post("/webhook/slack", body ?? dm, headers()), 401, UNAUTHORIZED);
      expect(submitted).toEqual([]);
    });
  }

  test("300 s either way is still accepted", async () => {
    const { post } = routes(CONFIGURED);
    expect((await post("/webhook/slack", dm, signSlack(dm, SLACK_SECRET, NOW - 300))).status).toBe(200);
    expect((await post("/webhook/slack", dm, signSlack(dm, SLACK_SECRET, NOW + 300))).status).toBe(200);
  });

  test("not configured (disabled, or no signing secret): 401 for every request, the route still answers", async () => {
    for (const toml of ["", configured({ ...SLACK, signingSecret: undefined }), configured({ ...SLACK, enabled: false })]) {
      const { post, submitted } = routes(toml);
      await expectReply(await post("/webhook/slack", dm, signSlack(dm, SLACK_SECRET, NOW)), 401, UNAUTHORIZED);
      expect(submitted).toEqual([]);
    }
  });

  test("a signed body that is not an Events API envelope: 400 invalid_webhook_payload", async () => {
    const { post } = routes(CONFIGURED);
    for (const body of ["not json", "[1,2,3]", '{"type":42}']) {
      await expectReply(await post("/webhook/slack", body, signSlack(body, SLACK_SECRET, NOW)), 400, INVALID);
    }
  });

  test("a request with no body at all: 401 missing_raw_body", async () => {
    const { app } = routes(CONFIGURED);
    const res = await app.handle(new Request("http://fermix.test/webhook/slack", { method: "POST", headers: signSlack("", SLACK_SECRET, NOW) }));
    await expectReply(res, 401, UNAUTHORIZED);
  });

  test("bot messages and edits are accepted (200) but not handed off", async () => {
    const { post, submitted } = routes(CONFIGURED);
    for (const event of [dmEvent({ bot_id: "B1" }), dmEvent({ subtype: "message_changed" })]) {
      const body = JSON.stringify(envelope(event));
      await expectReply(await post("/webhook/slack", body, signSlack(body, SLACK_SECRET, NOW)), 200, { ok: true });
    }
    expect(submitted).toEqual([]);
  });

  test("at capacity: 503 Webhook handoff unavailable; an unexpected hand-off error: 500 Webhook dispatch failed", async () => {
    const full = routes(CONFIGURED, async () => {
      throw new HandoffUnavailable();
    });
    await expectReply(await full.post("/webhook/slack", dm, signSlack(dm, SLACK_SECRET, NOW)), 503, { error: "Webhook handoff unavailable" });
    const broken = routes(CONFIGURED, async () => {
      throw new Error("disk I/O error");
    });
    await expectReply(await broken.post("/webhook/slack", dm, signSlack(dm, SLACK_SECRET, NOW)), 500, { error: "Webhook dispatch failed" });
  });
});

describe("/webhook/whatsapp", () => {
  test("GET: the right verify token echoes hub.challenge as plain text", async () => {
    const { get } = routes(CONFIGURED);
    const res = await get("/webhook/whatsapp?hub.mode=subscribe&hub.verify_token=verify-me-please&hub.challenge=1158201444");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain");
    expect(await res.text()).toBe("1158201444");
  });

  test("GET: a wrong or missing token is 401; a wrong mode is 400; not configured is 401", async () => {
    const { get } = routes(CONFIGURED);
    await expectReply(await get("/webhook/whatsapp?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1"), 401, UNAUTHORIZED);
    await expectReply(await get("/webhook/whatsapp?hub.mode=subscribe&hub.challenge=1"), 401, UNAUTHORIZED);
    await expectReply(await get("/webhook/whatsapp?hub.mode=unsubscribe&hub.verify_token=verify-me-please&hub.challenge=1"), 400, INVALID);
    await expectReply(await routes("").get("/webhook/whatsapp?hub.mode=subscribe&hub.verify_token=verify-me-please&hub.challenge=1"), 401, UNAUTHORIZED);
  });

  test("POST: a message older than max_message_age_hours is acknowledged and gets no turn (a replayed capture)", async () => {
    const toml = whatsappToml({
      accessToken: "t",
      phoneNumberId: "106540352242922",
      verifyToken: "v",
      appSecret: OFFICIAL_EXAMPLE_SECRET,
      ownerUserId: SENDER,
    });
    const { post, submitted } = routes(toml);
    const old = JSON.stringify(messagesPayload(message("wamid.OLD", "text", { text: { body: "from last week" }, timestamp: String(NOW - 7 * 24 * 3600) })));
    const fresh = JSON.stringify(messagesPayload(message("wamid.NEW", "text", { text: { body: "just now" }, timestamp: String(NOW - 60) })));
    await expectReply(await post("/webhook/whatsapp", old, signWhatsApp(old, OFFICIAL_EXAMPLE_SECRET)), 200, { ok: true });
    expect(submitted).toEqual([]);
    await expectReply(await post("/webhook/whatsapp", fresh, signWhatsApp(fresh, OFFICIAL_EXAMPLE_SECRET)), 200, { ok: true });
    expect(submitted.flatMap((s) => s.items.map((i) => i.key))).toEqual(["wamid.NEW"]);
  });

  test("POST: the official example with its signature is accepted and handed off", async () => {
    const { post, submitted } = routes(CONFIGURED);
    await expectReply(await post("/webhook/whatsapp", OFFICIAL_TEXT_EXAMPLE, { "x-hub-signature-256": OFFICIAL_EXAMPLE_SIGNATURE }), 200, { ok: true });
    expect(submitted[0]!.items[0]).toMatchObject({
      key: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=",
      message: { channel: "whatsapp", text: "Does it come in another color?", senderId: "16505551234" },
    });
  });

  test("POST: forged, altered, wrong-secret, missing-signature and not-configured requests are 401", async () => {
    const { post, submitted } = routes(CONFIGURED);
    const forged = { "x-hub-signature-256": `sha256=${"a".repeat(64)}` };
    await expectReply(await post("/webhook/whatsapp", OFFICIAL_TEXT_EXAMPLE, forged), 401, UNAUTHORIZED);
    await expectReply(
      await post("/webhook/whatsapp", OFFICIAL_TEXT_EXAMPLE.replace("color", "colour"), { "x-hub-signature-256": OFFICIAL_EXAMPLE_SIGNATURE }),
      401,
      UNAUTHORIZED,
    );
    await expectReply(await post("/webhook/whatsapp", OFFICIAL_TEXT_EXAMPLE, signWhatsApp(OFFICIAL_TEXT_EXAMPLE, "wrong")), 401, UNAUTHORIZED);
    await expectReply(await post("/webhook/whatsapp", OFFICIAL_TEXT_EXAMPLE), 401, UNAUTHORIZED);
    await expectReply(
      await routes("").post("/webhook/whatsapp", OFFICIAL_TEXT_EXAMPLE, { "x-hub-signature-256": OFFICIAL_EXAMPLE_SIGNATURE }),
      401,
      UNAUTHORIZED,
    );
    expect(submitted).toEqual([]);
  });

  test("POST: status callbacks are accepted and ignored; a signed non-JSON transport is 400", async () => {
    const { post, submitted } = routes(CONFIGURED);
    const statuses = JSON.stringify({
      object: "whatsapp_business_account",
      entry: [
        {
          id: "1",
          changes: [
            {
              field: "messages",
              value: { messaging_product: "whatsapp", statuses: [{ id: "wamid.X", status: "delivered", timestamp: "1", recipient_id: "1" }] },
            },
          ],
        },
      ],
    });
    await expectReply(await post("/webhook/whatsapp", statuses, signWhatsApp(statuses, OFFICIAL_EXAMPLE_SECRET)), 200, { ok: true });
    expect(submitted).toEqual([]);
    const body = "a=1";
    await expectReply(
      await post("/webhook/whatsapp", body, { ...signWhatsApp(body, OFFICIAL_EXAMPLE_SECRET), "content-type": "application/x-www-form-urlencoded" }),
      400,
      INVALID,
    );
  });

  test("POST: several messages in one delivery are handed off together, in order", async () => {
    const { post, submitted } = routes(CONFIGURED);
    const body = JSON.stringify(messagesPayload(message("wamid.1", "text", { text: { body: "one" } }), message("wamid.2", "text", { text: { body: "two" } })));
    expect((await post("/webhook/whatsapp", body, signWhatsApp(body, OFFICIAL_EXAMPLE_SECRET))).status).toBe(200);
    expect(submitted[0]!.items.map((i) => i.message.text)).toEqual(["one", "two"]);
  });
});

test("fuzz: 10,000 random and mutated requests at both routes — no undocumented status, no crash, no turn unless signed", async () => {
  const r = rng(7_2026);
  const { app, submitted } = routes(CONFIGURED);
  const documented = new Set([200, 400, 401, 404, 503, 500]);
  const seeds = [JSON.stringify(envelope(dmEvent({ text: "hi" }))), OFFICIAL_TEXT_EXAMPLE, JSON.stringify(URL_VERIFICATION)];
  let signedSubmits = 0;
  for (let i = 0; i < 10_000; i++) {
    const slack = r.next() < 0.5;
    const raw = r.next() < 0.5 ? mutateBytes(r, JSON.parse(r.pick(seeds))) : new TextEncoder().encode(JSON.stringify(randomJson(r)));
    const sign = r.next() < 0.4;
    const headers: Record<string, string> = {};
    if (r.next() < 0.8)
      headers["content-type"] = r.pick(["application/json", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-8"]);
    if (sign) Object.assign(headers, slack ? signSlack(raw, SLACK_SECRET, NOW + r.int(-400, 400)) : signWhatsApp(raw, OFFICIAL_EXAMPLE_SECRET));
    else if (r.next() < 0.5) {
      headers["x-slack-signature"] = `v0=${r.string(64, "0123456789abcdef")}`;
      headers["x-slack-request-timestamp"] = String(NOW);
      headers["x-hub-signature-256"] = `sha256=${r.string(64, "0123456789abcdef")}`;
    }
    const before = submitted.length;
    const res = await app.handle(
      new Request(`http://fermix.test/webhook/${slack ? "slack" : "whatsapp"}`, { method: r.next() < 0.95 ? "POST" : "PUT", body: raw, headers }),
    );
    expect(documented.has(res.status)).toBe(true);
    expect(res.status).not.toBe(500);
    if (submitted.length > before) {
      expect(sign).toBe(true);
      signedSubmits++;
    }
  }
  // The run exercised the accepting path too, not only refusals.
  expect(signedSubmits).toBeGreaterThan(0);
});

describe("routes come from the channels' profiles", () => {
  test("every channel whose profile declares a webhook has its route; a channel without one has none", async () => {
    const { post } = routes("");
    for (const name of GATEWAY_CHANNELS) {
      const res = await post(`/webhook/${name}`, "{}");
      // Declared but not configured: 401 (no secret to verify with); not declared: no route at all.
      expect([name, res.status]).toEqual([name, profileOf(name).webhook ? 401 : 404]);
    }
    expect(WEBHOOKS.map(([name]) => name)).toEqual(GATEWAY_CHANNELS.filter((name) => profileOf(name).webhook));
  });

  test("a Slack reply in a channel thread reaches the gateway only where Fermix has replied, asked of the outbox by channel, chat and thread", async () => {
    const config = resolveConfig({ file: parseConfigText(CONFIGURED, "c"), env: {}, secrets: {}, filePath: "c" }).config;
    const asked: string[] = [];
    const submitted: Submission[] = [];
    const app = webhookRoutes({
      config,
      log: quiet,
      nowSeconds: () => NOW,
      submit: async (_channel, items) => void submitted.push(...items),
      repliedInThread: (channel, chatId, threadId) => {
        asked.push(`${channel}/${chatId}/${threadId}`);
        return threadId === "1699999999.000001";
      },
    });
    const reply = (threadTs: string) => {
      const raw = JSON.stringify(envelope(messageEvent({ thread_ts: threadTs, ts: `${threadTs}9` })));
      return app.handle(
        new Request("http://fermix.test/webhook/slack", {
          method: "POST",
          body: raw,
          headers: { "content-type": "application/json", ...signSlack(raw, SLACK_SECRET, NOW) },
        }),
      );
    };
    await expectReply(await reply("1699999999.000001"), 200, { ok: true });
    await expectReply(await reply("1699999999.000002"), 200, { ok: true });
    expect(asked).toEqual(["slack/C0CHANNEL1/1699999999.000001", "slack/C0CHANNEL1/1699999999.000002"]);
    expect(submitted.map((s) => s.message.threadId)).toEqual(["1699999999.000001"]);
  });
});
