/** End to end with the compiled binary: a signed Slack event in, the fake model answers, the reply lands in the thread on the Slack fake. */
import { expect, test } from "bun:test";
import { reply } from "../fakes/model-server.ts";
import { SLACK_ALICE, SLACK_CHANNEL } from "../fakes/slack.ts";
import { CHANNELS_OFF, providerToml, slackToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { postSlackWebhook } from "../helpers/sign.ts";

const SIGNING_SECRET = "e2e-slack-signing-secret-0123456789";
const start = e2eResources();

test("an @mention in a channel is answered in its thread with the model's words", async () => {
  const model = await start.model();
  model.reply(reply.text("Sunny ", "with a light breeze."));
  const slack = start.slack();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      slackToml({ botToken: slack.token, signingSecret: SIGNING_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }),
  );
  const daemon = await start.daemon(home);

  const health = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { channels: Array<Record<string, unknown>> };
  expect(health.channels.find((c) => c.name === "slack")).toEqual({ name: "slack", status: "ready", enabled: true, mode: "webhook", process_alive: true });

  const envelope = slack.events.appMention("what's the weather?");
  const mentionTs = (envelope as { event: { ts: string } }).event.ts;
  const body = JSON.stringify(envelope);
  const res = await postSlackWebhook(daemon.url, body, SIGNING_SECRET);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ ok: true });

  const texts = await slack.waitForTexts(SLACK_CHANNEL, (t) => t.join("\n").includes("light breeze"), mentionTs, 15_000);
  expect(texts.join("\n")).toContain("Sunny");
  const call = slack.calls("chat.postMessage").find((r) => String(r.body.text).includes("light breeze"))!;
  expect(call.body).toMatchObject({ channel: SLACK_CHANNEL, thread_ts: mentionTs, unfurl_links: "false", unfurl_media: "false" });
  // The model saw the user's words, without the bot mention.
  const [request] = await model.waitForRequests(1);
  expect(JSON.stringify(request!.body)).toContain("what's the weather?");
  expect(daemon.logs()).not.toContain(slack.token);
  expect(daemon.logs()).not.toContain(SIGNING_SECRET);
}, 60_000);

test("a bot token Slack rejects shows in health as a failed channel, Slack's reason in the log only, never the token", async () => {
  const model = await start.model();
  const slack = start.slack();
  const home = start.home();
  const wrongToken = "xoxb-revoked-token-0000000000";
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      slackToml({ botToken: wrongToken, signingSecret: SIGNING_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }),
  );
  const daemon = await start.daemon(home);
  const res = await fetch(new URL("/health/ready", daemon.url));
  expect(res.status).toBe(503);
  const health = (await res.json()) as { status: string; failures: string[]; channels: Array<Record<string, unknown>> };
  expect(health.status).toBe("degraded");
  expect(health.channels.find((c) => c.name === "slack")).toEqual({ name: "slack", status: "failed", enabled: true, mode: "webhook", process_alive: false });
  expect(health.failures.join("\n")).toContain("Slack did not accept the bot token");
  // Slack's own reason is for the log; health says what failed and its status.
  expect(health.failures.join("\n")).not.toContain("invalid_auth");
  expect(daemon.logs()).toContain("invalid_auth");
  expect(JSON.stringify(health)).not.toContain(wrongToken);
  expect(daemon.logs()).not.toContain(wrongToken);
});
