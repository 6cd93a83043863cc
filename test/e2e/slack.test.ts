/** End to end with the compiled binary: a signed Slack event in, the fake model answers, the reply lands in the thread on the Slack fake. */
import { afterEach, expect, test } from "bun:test";
import { type RunningDaemon, startDaemon } from "../helpers/binary.ts";
import { makeHome, type TestHome } from "../helpers/home.ts";
import { nowSeconds, signSlack } from "../helpers/sign.ts";
import { type FakeModel, reply, startFakeModel } from "../fakes/model-server.ts";
import { SLACK_ALICE, SLACK_CHANNEL, type SlackFake, startSlackFake } from "../fakes/slack.ts";

const SIGNING_SECRET = "e2e-slack-signing-secret-0123456789";
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function configToml(model: FakeModel, slack: SlackFake): string {
  return `
[fermix_core.providers.fake]
api = "chat"
base_url = "${model.url}"
model = "fake-model"

[fermix_channels.telegram]
enabled = false

[fermix_channels.acp]
enabled = false

[fermix_channels.slack]
enabled = true
bot_token = "${slack.token}"
signing_secret = "${SIGNING_SECRET}"
owner_user_id = "${SLACK_ALICE}"
api_url = "${slack.apiUrl}"
`;
}

test("an @mention in a channel is answered in its thread with the model's words", async () => {
  const model = await startFakeModel();
  cleanups.push(() => model.stop());
  model.reply(reply.text("Sunny ", "with a light breeze."));
  const slack = startSlackFake();
  cleanups.push(() => slack.stop());
  const home: TestHome = makeHome();
  cleanups.push(() => home.cleanup());
  home.writeConfig(configToml(model, slack));
  const daemon: RunningDaemon = await startDaemon(home.env);
  cleanups.push(() => (daemon.proc.exitCode === null ? daemon.stop("SIGKILL") : undefined));

  const health = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { channels: Array<Record<string, unknown>> };
  expect(health.channels.find((c) => c.name === "slack")).toEqual({ name: "slack", status: "ready", enabled: true, mode: "webhook", process_alive: true });

  const envelope = slack.events.appMention("what's the weather?");
  const mentionTs = (envelope as { event: { ts: string } }).event.ts;
  const body = JSON.stringify(envelope);
  const res = await fetch(new URL("/webhook/slack", daemon.url), {
    method: "POST",
    headers: { "content-type": "application/json", ...signSlack(body, SIGNING_SECRET, nowSeconds()) },
    body,
  });
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
