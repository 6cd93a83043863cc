/**
 * The webhook contract against the running compiled daemon over real HTTP:
 * every refusal with its documented status and body, the challenges, the 200
 * before a slow turn, concurrent duplicates answered once, and a WhatsApp
 * album merged into one turn with the following text kept in order.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type FakeModel, lastInputParts, reply, startFakeModel } from "../fakes/model-server.ts";
import { SLACK_ALICE, SLACK_DM, type SlackFake, startSlackFake } from "../fakes/slack.ts";
import { startWhatsAppFake, WA_USER, type WhatsAppFake } from "../fakes/whatsapp.ts";
import { type RunningDaemon, startDaemon } from "../helpers/binary.ts";
import { CHANNELS_OFF, OPENAI_TEST, providerToml, slackToml, whatsappToml } from "../helpers/config.ts";
import { makeHome, type TestHome } from "../helpers/home.ts";
import { nowSeconds, signSlack, signWhatsApp } from "../helpers/sign.ts";

const SLACK_SECRET = "e2e-slack-signing-secret";
const WA_SECRET = "e2e-whatsapp-app-secret";
const VERIFY = "e2e-verify-token";

let model: FakeModel;
let slack: SlackFake;
let wa: WhatsAppFake;
let home: TestHome;
let bare: TestHome;
let daemon: RunningDaemon;
let unconfigured: RunningDaemon;

beforeAll(async () => {
  model = await startFakeModel();
  slack = startSlackFake();
  wa = startWhatsAppFake();
  home = makeHome();
  home.writeConfig(
    providerToml(model.url, OPENAI_TEST) +
      CHANNELS_OFF +
      slackToml({ botToken: slack.token, signingSecret: SLACK_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }) +
      whatsappToml({
        accessToken: wa.token,
        phoneNumberId: wa.phoneNumberId,
        verifyToken: VERIFY,
        appSecret: WA_SECRET,
        ownerUserId: WA_USER.wa_id,
        graphApiBase: wa.graphBase("v21.0"),
        albumDebounceMs: 300,
      }),
  );
  // A daemon with no provider and no webhook channel: its routes must refuse everything.
  bare = makeHome();
  bare.writeConfig(CHANNELS_OFF);
  [daemon, unconfigured] = await Promise.all([startDaemon(home.env), startDaemon(bare.env)]);
});

afterAll(async () => {
  await Promise.all([daemon?.stop("SIGKILL"), unconfigured?.stop("SIGKILL")]);
  home?.cleanup();
  bare?.cleanup();
  await slack?.stop();
  await wa?.stop();
  await model?.stop();
});

const post = (d: RunningDaemon, path: string, body: string, headers: Record<string, string>) =>
  fetch(new URL(path, d.url), { method: "POST", body, headers: { "content-type": "application/json", ...headers } });

async function expectReply(res: Response, status: number, body: unknown) {
  expect(res.status).toBe(status);
  expect(await res.json()).toEqual(body);
}
const UNAUTHORIZED = { error: "Unauthorized" };

test("Slack refusals over HTTP: forged, altered, wrong secret, stale, future-skewed, missing headers, not configured", async () => {
  const body = JSON.stringify(slack.events.dm("hello"));
  const now = nowSeconds();
  const cases: Array<[string, Record<string, string>, string?]> = [
    ["forged", { ...signSlack(body, SLACK_SECRET, now), "x-slack-signature": `v0=${"f".repeat(64)}` }],
    ["altered body", signSlack(body, SLACK_SECRET, now), body.replace("hello", "hellO")],
    ["wrong secret", signSlack(body, "not-the-secret", now)],
    ["stale", signSlack(body, SLACK_SECRET, now - 301)],
    // Well past the 300 s window: the daemon's clock moves on while the cases are posted one by one.
    ["future-skewed", signSlack(body, SLACK_SECRET, now + 330)],
    ["missing signature", { "x-slack-request-timestamp": String(now) }],
    ["missing timestamp", { "x-slack-signature": signSlack(body, SLACK_SECRET, now)["x-slack-signature"]! }],
  ];
  for (const [name, headers, sent] of cases) {
    const res = await post(daemon, "/webhook/slack", sent ?? body, headers);
    expect({ name, status: res.status }).toEqual({ name, status: 401 });
    expect(await res.json()).toEqual(UNAUTHORIZED);
  }
  await expectReply(await post(unconfigured, "/webhook/slack", body, signSlack(body, SLACK_SECRET, now)), 401, UNAUTHORIZED);
  expect(model.requests).toHaveLength(0);
});

test("WhatsApp refusals and challenges over HTTP", async () => {
  const body = JSON.stringify(wa.webhook.text("hi"));
  await expectReply(await post(daemon, "/webhook/whatsapp", body, { "x-hub-signature-256": `sha256=${"0".repeat(64)}` }), 401, UNAUTHORIZED);
  await expectReply(await post(daemon, "/webhook/whatsapp", body.replace("hi", "ho"), signWhatsApp(body, WA_SECRET)), 401, UNAUTHORIZED);
  await expectReply(await post(daemon, "/webhook/whatsapp", body, {}), 401, UNAUTHORIZED);
  await expectReply(await post(unconfigured, "/webhook/whatsapp", body, signWhatsApp(body, WA_SECRET)), 401, UNAUTHORIZED);
  const signedJunk = "{not json";
  await expectReply(await post(daemon, "/webhook/whatsapp", signedJunk, signWhatsApp(signedJunk, WA_SECRET)), 400, { error: "Invalid webhook" });

  const ok = await fetch(new URL(`/webhook/whatsapp?hub.mode=subscribe&hub.verify_token=${VERIFY}&hub.challenge=8675309`, daemon.url));
  expect(ok.status).toBe(200);
  expect(await ok.text()).toBe("8675309");
  const wrong = await fetch(new URL("/webhook/whatsapp?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=8675309", daemon.url));
  await expectReply(wrong, 401, UNAUTHORIZED);
  expect(model.requests).toHaveLength(0);
});

test("Slack url_verification over HTTP answers the challenge", async () => {
  const body = JSON.stringify({ token: "t", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", type: "url_verification" });
  const res = await post(daemon, "/webhook/slack", body, signSlack(body, SLACK_SECRET, nowSeconds()));
  expect(res.status).toBe(200);
  expect(await res.text()).toBe("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P");
});

test("the 200 comes back while the turn is still running; 20 concurrent redeliveries make no second turn", async () => {
  model.reset();
  model.reply(reply.slow(300, "answered ", "once"));
  const envelope = slack.events.dm("only once please");
  const body = JSON.stringify(envelope);
  const first = await post(daemon, "/webhook/slack", body, signSlack(body, SLACK_SECRET, nowSeconds()));
  expect(first.status).toBe(200);
  // Acknowledged, yet nothing is on the platform: the turn runs after the 200.
  expect(slack.visibleTexts(SLACK_DM).filter((t) => t.includes("answered once"))).toEqual([]);
  const retries = await Promise.all(
    Array.from({ length: 20 }, () => {
      const again = JSON.stringify({ ...envelope, event_id: `Ev${crypto.randomUUID()}` });
      return post(daemon, "/webhook/slack", again, { ...signSlack(again, SLACK_SECRET, nowSeconds()), "x-slack-retry-num": "1" });
    }),
  );
  expect(retries.map((r) => r.status)).toEqual(Array(20).fill(200));
  await slack.waitForTexts(SLACK_DM, (texts) => texts.some((t) => t.includes("answered once")));
  // A later message is answered too — and it is the model's second request, not its third.
  model.reply(reply.text("and the next"));
  const next = JSON.stringify(slack.events.dm("next"));
  expect((await post(daemon, "/webhook/slack", next, signSlack(next, SLACK_SECRET, nowSeconds()))).status).toBe(200);
  await slack.waitForTexts(SLACK_DM, (texts) => texts.some((t) => t.includes("and the next")));
  expect(model.requests).toHaveLength(2);
  expect(slack.visibleTexts(SLACK_DM).filter((t) => t.includes("answered once"))).toHaveLength(1);
});

test("a WhatsApp album: images from one sender merge into one turn; the text after it is answered after it", async () => {
  model.reset();
  model.reply(reply.text("two photos"), reply.text("about the text"));
  for (const payload of [wa.webhook.image({ caption: "front" }), wa.webhook.image({ caption: "back" }), wa.webhook.text("which one?")]) {
    const body = JSON.stringify(payload);
    expect((await post(daemon, "/webhook/whatsapp", body, signWhatsApp(body, WA_SECRET))).status).toBe(200);
  }
  const texts = await wa.waitForTexts(WA_USER.wa_id, (t) => t.some((x) => x.includes("about the text")));
  expect(texts.filter((t) => t.includes("two photos") || t.includes("about the text"))).toEqual(["two photos", "about the text"]);
  const album = lastInputParts(model.requests[0]!);
  expect(album.filter((c) => c.type === "input_image")).toHaveLength(2);
  expect(album.find((c) => c.type === "input_text")!.text).toBe("front\nback");
  expect(lastInputParts(model.requests[1]!)[0]?.text).toBe("which one?");
});
