/**
 * Scheduled jobs end to end with the compiled binary, Telegram as the
 * channel and the fake model calling `schedule`: a job a few seconds ahead
 * delivers its result once (and /new, /stop leave it pending); one the owner
 * makes on Telegram with `target` naming their Slack channel arrives there
 * (on the Slack fake) and not on Telegram; a job made from
 * `fermix ask` arrives on Telegram through default_target; a job due while
 * the daemon was down runs once at the next start, marked late; a SIGKILL
 * mid-run, or mid-delivery, then a restart delivers the result exactly once.
 * The cron tick is tested with an injected clock (test/gateway/scheduler.test.ts).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabaseReadOnly } from "../../src/store/db.ts";
import { type Job, JobStore } from "../../src/store/jobs.ts";
import { type RecordedRequest, reply, userText } from "../fakes/model-server.ts";
import { SLACK_ALICE, SLACK_CHANNEL } from "../fakes/slack.ts";
import { ALICE } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, slackToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";
import { nowSeconds, signSlack } from "../helpers/sign.ts";

const start = e2eResources();

const JOB_ANSWER = "Time to stretch, Alice!";
/**
 * After a job's result arrived, how long nothing more may come: a run the
 * scheduler did not close is due again at once, so a second model request
 * and a second message would follow within milliseconds; 1.5 s holds that
 * on a loaded machine.
 */
const NO_REPEAT_MS = 1500;

async function setup(extraToml = "") {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF + extraToml,
  );
  /** Send a message as Alice and wait until the chat shows a bot message containing `answer`. */
  const say = async (text: string, answer: string) => {
    telegram.pushMessage(telegram.message.text(text));
    await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes(answer)), 10_000);
  };
  /** The bot's messages in Alice's chat that contain `text`. */
  const shown = (text: string) => telegram.visibleTexts(ALICE.id).filter((t) => t.includes(text));
  /** The job's run: the model is given the scheduled request and answers it. */
  const jobReply = (request: RecordedRequest) =>
    reply.text(userText(request).includes("Scheduled job #1") && userText(request).includes("Remind Alice to stretch") ? JOB_ANSWER : "unexpected prompt");
  return { model, telegram, home, say, shown, jobReply };
}

/** The jobs still to run, read from the database of a stopped daemon. */
function readJobs(home: TestHome): Job[] {
  const db = openDatabaseReadOnly(join(home.home, "fermix.db"));
  try {
    return new JobStore(db).live();
  } finally {
    db.close();
  }
}

/** Alice asks for a reminder `when`; the model schedules it and says so. */
async function scheduleStretch(s: Awaited<ReturnType<typeof setup>>, when: string) {
  s.model.reply(reply.toolCall("schedule", { when, request: "Remind Alice to stretch" }), reply.text("Scheduled your reminder."));
  await s.say(`remind me ${when} to stretch`, "Scheduled your reminder");
}

test("a job scheduled 2 s ahead delivers its result once; /new and /stop meanwhile leave it pending", async () => {
  const s = await setup();
  await start.daemon(s.home);
  await scheduleStretch(s, "in 2 seconds");
  const scheduledAt = Date.now();
  s.model.reply(s.jobReply);
  await s.say("/new", "Started a new conversation");
  await s.say("/stop", "Scheduled jobs are kept (1 job still to run");

  await s.telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes(JOB_ANSWER)), 10_000);
  expect(Date.now() - scheduledAt).toBeGreaterThanOrEqual(1500);
  await Bun.sleep(NO_REPEAT_MS);
  expect(s.shown(JOB_ANSWER)).toEqual([`⏰ Scheduled job #1\n\n${JOB_ANSWER}`]);
  expect(s.model.requests).toHaveLength(3);
  // /tasks shows the finished run beside the background work, and no job still to run.
  await s.say("/tasks", "done: scheduled job #1");
  expect(s.telegram.visibleTexts(ALICE.id).at(-1)).not.toContain("Scheduled jobs");
}, 30_000);

test("a job the owner makes on Telegram with target naming their Slack channel arrives in that channel once, not on Telegram", async () => {
  const slack = start.slack();
  const signingSecret = "e2e-jobs-slack-signing-secret-0001";
  const s = await setup(slackToml({ botToken: slack.token, signingSecret, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }));
  const daemon = await start.daemon(s.home);

  // Alice talks to Fermix in the Slack channel first: a chat the owner uses, so a job may go there.
  s.model.reply(reply.text("Hello in #general."));
  const mention = JSON.stringify(slack.events.appMention("hello"));
  const res = await fetch(new URL("/webhook/slack", daemon.url), {
    method: "POST",
    headers: { "content-type": "application/json", ...signSlack(mention, signingSecret, nowSeconds()) },
    body: mention,
  });
  expect(res.status).toBe(200);
  await slack.waitForTexts(SLACK_CHANNEL, (texts) => texts.some((t) => t.includes("Hello in #general")), undefined, 10_000);

  // On Telegram she asks for the reminder in that Slack channel.
  s.model.reply(
    reply.toolCall("schedule", { when: "in 2 seconds", request: "Remind Alice to stretch", target: `slack:${SLACK_CHANNEL}` }),
    reply.text("I'll remind you in Slack."),
    s.jobReply,
  );
  await s.say("remind me in 2 seconds in our Slack channel to stretch", "I'll remind you in Slack");
  expect(JSON.stringify(s.model.requests[2]!.body.input)).toContain(`the result goes to slack chat ${SLACK_CHANNEL}`);

  const inSlack = () => slack.visibleTexts(SLACK_CHANNEL).filter((t) => t.includes(JOB_ANSWER));
  await slack.waitForTexts(SLACK_CHANNEL, () => inSlack().length > 0, undefined, 10_000);
  await Bun.sleep(NO_REPEAT_MS);
  expect(inSlack()).toHaveLength(1);
  expect(inSlack()[0]).toContain("Scheduled job #1");
  // Posted in the channel itself, not in the thread of the earlier mention.
  const post = slack.messages(SLACK_CHANNEL).find((e) => e.sender === "bot" && e.text.includes(JOB_ANSWER))!;
  expect(post.thread_ts).toBeUndefined();
  expect(s.shown(JOB_ANSWER)).toEqual([]);
  expect(s.model.requests).toHaveLength(4);
}, 30_000);

test("a job made with `fermix ask` arrives on Telegram through [fermix_core.jobs] default_target", async () => {
  const s = await setup(tomlTable("fermix_core.jobs", { default_target: `telegram:${ALICE.id}` }));
  await start.daemon(s.home);
  s.model.reply(reply.toolCall("schedule", { when: "in 2 seconds", request: "Remind Alice to stretch" }), reply.text("I'll tell you on Telegram."), s.jobReply);
  const ask = await runFermix(["ask", "remind me on telegram in 2 seconds to stretch"], s.home.env);
  expect(ask.stdout).toContain("I'll tell you on Telegram.");
  expect(ask.exitCode).toBe(0);
  const [, afterCall] = s.model.requests;
  expect(JSON.stringify(afterCall!.body.input)).toContain(`the result goes to telegram chat ${ALICE.id}`);

  await s.telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes(JOB_ANSWER)), 10_000);
  await Bun.sleep(NO_REPEAT_MS);
  expect(s.shown(JOB_ANSWER)).toHaveLength(1);
}, 30_000);

test("a job that fell due while the daemon was down runs once at the next start, marked late", async () => {
  const s = await setup();
  const first = await start.daemon(s.home);
  await scheduleStretch(s, "in 2 seconds");
  expect(await first.stop()).toBe(0);
  const [job] = readJobs(s.home);
  await until("the job's due time to pass while the daemon is down", () => Date.now() > job!.dueAt, 10_000);
  expect(s.shown(JOB_ANSWER)).toEqual([]);

  s.model.reply(s.jobReply);
  await start.daemon(s.home);
  await s.telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes(JOB_ANSWER)), 10_000);
  await Bun.sleep(NO_REPEAT_MS);
  const [delivered, ...more] = s.shown(JOB_ANSWER);
  expect(more).toEqual([]);
  expect(delivered).toMatch(/^⏰ Scheduled job #1 — late: it was due .+, while Fermix was not running\.\n\nTime to stretch, Alice!$/);
  expect(userText(s.model.requests[2]!)).toContain("it runs late");
  expect(s.model.requests).toHaveLength(3);
}, 30_000);

test("SIGKILL while the job's model answer is still coming: after a restart it runs again and is delivered once", async () => {
  const s = await setup();
  const first = await start.daemon(s.home);
  await scheduleStretch(s, "in 1 second");
  // The run's model request hangs mid-answer; the daemon dies under it.
  s.model.reply(reply.hang("Time to"));
  const [, , run] = await s.model.waitForRequests(3, 10_000);
  expect(await first.stop("SIGKILL")).not.toBe(0);
  await run!.untilAborted;
  expect(s.shown("Time to")).toEqual([]);

  s.model.reply(s.jobReply);
  await start.daemon(s.home);
  await s.telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes(JOB_ANSWER)), 10_000);
  await Bun.sleep(NO_REPEAT_MS);
  expect(s.shown("Time to")).toHaveLength(1);
  expect(s.model.requests).toHaveLength(4);
}, 30_000);

test("SIGKILL while Telegram holds the answer to the job's message: after a restart it is not sent again, nor run again", async () => {
  const s = await setup();
  const first = await start.daemon(s.home);
  await scheduleStretch(s, "in 1 second");
  s.model.reply(s.jobReply);
  // The job's message reaches the chat, but the daemon never hears that it did.
  const hold = s.telegram.holdAnswer("sendMessage");
  await s.telegram.waitForRequest("sendMessage", (r) => String(r.body.text ?? "").includes(JOB_ANSWER), 10_000);
  expect(await first.stop("SIGKILL")).not.toBe(0);
  hold.release();

  const second = await start.daemon(s.home);
  const decided = "scheduled run was delivered before a restart; not run again";
  await until("the restarted scheduler's decision", () => second.logs().includes(decided), 10_000);
  await Bun.sleep(NO_REPEAT_MS);
  expect(s.shown(JOB_ANSWER)).toHaveLength(1);
  expect(s.model.requests).toHaveLength(3);
}, 30_000);
