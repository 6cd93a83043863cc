/**
 * Inbox replay with the compiled binary: a signed Slack DM is acknowledged,
 * the daemon is SIGKILLed while the model is still answering, and the next
 * start completes that turn exactly once — one more model request, the
 * message in it once, one reply in the DM, and nothing left to replay.
 * And the one rule for a part in flight at a crash: killed while the turn's
 * only send waited for Slack's answer (Slack had posted it), the next start
 * neither sends that part again nor posts the committed answer a second time.
 */

import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { type RecordedRequest, reply } from "../fakes/model-server.ts";
import { SLACK_ALICE, SLACK_DM } from "../fakes/slack.ts";
import type { RunningDaemon } from "../helpers/binary.ts";
import { CHANNELS_OFF, providerToml, slackToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { until } from "../helpers/gateway.ts";
import { postSlackWebhook } from "../helpers/sign.ts";

const SECRET = "replay-test-signing-secret-0000";
const resources = e2eResources();

/** Every user text the model was shown in one request. */
const userTexts = (request: RecordedRequest): string[] =>
  request.body.messages!.filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

async function setup() {
  const model = await resources.model();
  const slack = resources.slack();
  const home = resources.home();
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      slackToml({ botToken: slack.token, signingSecret: SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }),
  );
  /** Each start is a new daemon process on the same home (and so the same inbox). */
  const start = () => resources.daemon(home);
  const post = (d: RunningDaemon, text: string) => {
    const body = JSON.stringify(slack.events.dm(text));
    return postSlackWebhook(d.url, body, SECRET);
  };
  return { model, slack, home, start, post };
}

test("SIGKILL mid-turn: the next start replays the acknowledged message and completes it exactly once", async () => {
  const { model, slack, home, start, post } = await setup();
  model.reply(reply.hang("Let me th"));
  const first = await start();
  expect((await post(first, "please do not lose this message")).status).toBe(200);
  const [hanging] = await model.waitForRequests(1);
  expect(userTexts(hanging!)).toEqual(["please do not lose this message"]);
  expect(await first.stop("SIGKILL")).not.toBe(0);
  expect(slack.visibleTexts(SLACK_DM)).toEqual([]);

  model.reply(reply.text("Safe and sound."));
  const second = await start();
  const texts = await slack.waitForTexts(SLACK_DM, (t) => t.length > 0);
  expect(texts).toHaveLength(1);
  expect(texts[0]).toContain("Safe and sound.");
  expect(model.requests).toHaveLength(2);
  // The replayed turn shows the model the message once, not once per attempt.
  expect(userTexts(model.requests[1]!)).toEqual(["please do not lose this message"]);

  // Done means done: nothing is left in the inbox for a later start to replay, and history has the turn once.
  const db = new Database(join(home.home, "fermix.db"), { readonly: true });
  resources.defer(() => db.close());
  await until(() => (db.query("SELECT count(*) AS n FROM inbox").get() as { n: number }).n === 0, "the inbox entry to be done");
  expect(await second.stop("SIGTERM")).toBe(0);
  const history = db.query("SELECT role, content FROM messages ORDER BY id").all();
  expect(history).toEqual([
    { role: "user", content: "please do not lose this message" },
    { role: "assistant", content: "Safe and sound." },
  ]);
  expect(slack.visibleTexts(SLACK_DM)).toHaveLength(1);
});

test("SIGTERM mid-turn: the daemon stops cleanly, leaves the turn in the inbox, and the next start answers it once", async () => {
  const { model, slack, start, post } = await setup();
  model.reply(reply.hang());
  const first = await start();
  expect((await post(first, "answer me after the restart")).status).toBe(200);
  const [hanging] = await model.waitForRequests(1);
  expect(await first.stop("SIGTERM")).toBe(0);
  expect(hanging!.aborted).toBe(true);
  expect(slack.visibleTexts(SLACK_DM)).toEqual([]);

  model.reply(reply.text("Here I am."));
  await start();
  const texts = await slack.waitForTexts(SLACK_DM, (t) => t.length > 0);
  expect(texts).toEqual([expect.stringContaining("Here I am.")]);
  expect(model.requests).toHaveLength(2);
  expect(userTexts(model.requests[1]!)).toEqual(["answer me after the restart"]);
});

test("SIGKILL while the turn's only send waits for Slack: the part in flight is not sent again, and the replay does not post the answer twice", async () => {
  const { model, slack, home, start, post } = await setup();
  model.reply(reply.text("Safe and sound, once."));
  // Slack posts the message but its answer never comes: the daemon cannot know it arrived.
  slack.neverAnswerNext("chat.postMessage");
  const first = await start();
  expect((await post(first, "answer me exactly once")).status).toBe(200);
  await slack.waitForTexts(SLACK_DM, (t) => t.length > 0);
  expect(await first.stop("SIGKILL")).not.toBe(0);

  // Were the model asked again, this is what it would say.
  model.reply(reply.text("A second answer that must never be posted."));
  const second = await start();
  const db = new Database(join(home.home, "fermix.db"), { readonly: true });
  resources.defer(() => db.close());
  // The replayed turn is done when its inbox entry is: whatever it was going to send is recorded by then.
  await until(() => (db.query("SELECT count(*) AS n FROM inbox").get() as { n: number }).n === 0, "the replayed turn to finish");
  expect(second.logs()).toContain("outbox parts interrupted mid-send are not re-sent");
  expect(db.query("SELECT state FROM outbox").all()).toEqual([{ state: "unknown" }]);
  expect(await second.stop("SIGTERM")).toBe(0);
  expect(slack.visibleTexts(SLACK_DM)).toEqual(["Safe and sound, once."]);
  expect(slack.calls("chat.postMessage")).toHaveLength(1);
  // The answer was written before the send: the model was asked once, and history has the turn once.
  expect(model.requests).toHaveLength(1);
  expect(db.query("SELECT role, content FROM messages ORDER BY id").all()).toEqual([
    { role: "user", content: "answer me exactly once" },
    { role: "assistant", content: "Safe and sound, once." },
  ]);
}, 60_000);
