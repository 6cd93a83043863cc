/**
 * Scheduled jobs through the gateway (the core built in-process, the fake
 * model scripting tool calls): who may schedule what and send it where,
 * /tasks and /stop beside pending jobs, and a due job's result delivered to
 * its target through the outbox with its heading; memory tools offered by
 * scope. The compiled binary's tests (test/e2e/jobs.test.ts) cover time,
 * restarts and crashes.
 */
import { afterEach, expect, test } from "bun:test";
import { reply, userText } from "../fakes/model-server.ts";
import { DEFAULT_CHANNELS_TOML, type Harness, RecordingChannel, startHarness, TELEGRAM_FRIEND, TELEGRAM_OWNER, toolNames, until } from "../helpers/gateway.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** The output the model was given for its tool call, from the request after it. */
const toolOutput = (index: number): string => String(h.fake.requests[index]!.body.input!.find((i) => i.type === "function_call_output")?.output ?? "");

test("a job scheduled in a chat delivers there when due; /tasks lists it until then; /stop keeps it", async () => {
  h = await startHarness();
  h.fake.reply(reply.toolCall("schedule", { when: "in 1 hour", request: "Remind the user to water the plants" }), reply.text("Will do."));
  await h.ingest({ text: "remind me in an hour to water the plants" });
  // The scheduler runs only inside `fermix run`; here it has not started yet, and the model is told so.
  expect(toolOutput(1)).toMatch(/^scheduled job #1 for .+, in 1 hour; the result goes to this conversation; note: Fermix is not running as a daemon/);
  const [job] = h.core.jobs.live();
  expect(job).toMatchObject({ request: "Remind the user to water the plants", target: { channel: "telegram", chatId: "c1" }, origin: { role: "operator" } });

  await h.ingest({ text: "/tasks" });
  expect(h.telegram.texts().at(-1)).toMatch(/Scheduled jobs[\s\S]*#1: .+, in 1 hour → telegram chat c1: Remind the user to water the plants/);
  await h.ingest({ text: "/stop" });
  expect(h.telegram.texts().at(-1)).toBe("Nothing was running. Scheduled jobs are kept (1 job still to run: /tasks lists them).");
  expect(h.core.jobs.live()).toHaveLength(1);

  // Make it due in a moment, and let the scheduler run it.
  h.fake.reply((request) => reply.text(userText(request).includes("water the plants") ? "💧 Time to water the plants!" : "wrong prompt"));
  h.core.scheduler.start();
  h.core.db.run("UPDATE jobs SET due_at = ?1", [Date.now() + 200]);
  h.core.scheduler.wake();
  const delivered = await h.telegram.waitForText((t) => t.includes("water the plants!"));
  expect(delivered).toBe("⏰ <i>Scheduled job #1</i>\n\n💧 Time to water the plants!");
  expect(h.fake.requests.at(-1)!.body.instructions).toContain("Channel: telegram");
  // c1 is not the owner's own chat id, so it counts as shared: the request is shown as the owner's.
  expect(userText(h.fake.requests.at(-1)!)).toMatch(/^\[\(id 1001\), the owner\]\n\[Scheduled job #1, made .+; due .+\. Carry out the request below now/);
  await until(() => h.core.jobs.get(1)!.state === "done", "the job to be done");
  expect(h.core.conversations.history("telegram:c1:").at(-1)).toMatchObject({ role: "assistant", text: "[scheduled job #1] 💧 Time to water the plants!" });
  expect(h.eventsNamed("job.run").map((e) => e.metadata)).toEqual([{ channel: "telegram", kind: "once", outcome: "ok", late: false }]);
});

test("only the owner may send a job elsewhere, and only to a chat Fermix talks in; anyone's jobs are their own", async () => {
  h = await startHarness();
  h.fake.reply(
    reply.toolCall("schedule", { when: "in 5 minutes", request: "ping", target: "telegram:c1" }),
    reply.text("no"),
    reply.toolCall("schedule", { when: "in 5 minutes", request: "Bob's own reminder" }),
    reply.text("ok"),
    reply.toolCall("schedule", { when: "in 5 minutes", request: "to a stranger", target: "telegram:99999" }),
    reply.text("no"),
    reply.toolCall("schedule", { when: "in 5 minutes", request: "owner's reminder", target: "telegram:friend-chat" }),
    reply.text("ok"),
    reply.toolCall("list_jobs", {}),
    reply.text("listed"),
    reply.toolCall("cancel_job", { id: 2 }),
    reply.text("no"),
  );
  await h.ingest({ chatId: "friend-chat", senderId: TELEGRAM_FRIEND, text: "send to c1" });
  expect(toolOutput(1)).toBe("error: only the owner may send a job's result to another chat; leave target out");
  await h.ingest({ chatId: "friend-chat", senderId: TELEGRAM_FRIEND, text: "remind me" });
  expect(toolOutput(3)).toMatch(/^scheduled job #1 /);
  await h.ingest({ text: "remind a stranger" });
  expect(toolOutput(5)).toBe("error: Fermix does not talk in telegram chat 99999; a job can only go to a chat the owner uses");
  await h.ingest({ text: "remind me in the friend chat" });
  expect(toolOutput(7)).toMatch(/^scheduled job #2 .+ the result goes to telegram chat friend-chat;/);
  // The owner's list has only the owner's jobs; Bob cannot cancel one of them.
  await h.ingest({ text: "what's scheduled?" });
  expect(toolOutput(9)).toMatch(/^#2: .+owner's reminder$/);
  await h.ingest({ chatId: "friend-chat", senderId: TELEGRAM_FRIEND, text: "cancel job 2" });
  expect(toolOutput(11)).toBe("error: there is no scheduled job #2 of yours still to run; see list_jobs");
  expect(h.core.jobs.live().map((j) => j.id)).toEqual([1, 2]);
});

test("a job made on the command line goes to default_target; without one, the model is told to give a target", async () => {
  const cli = new RecordingChannel();
  h = await startHarness({
    channels: { telegram: new RecordingChannel(), cli },
    toml: `
[fermix_channels.telegram]
enabled = true
bot_token = "123456:test-token"
owner_user_id = "${TELEGRAM_OWNER}"

[fermix_channels.acp]
enabled = false

[fermix_core.jobs]
default_target = "telegram:${TELEGRAM_OWNER}"
`,
  });
  h.fake.reply(reply.toolCall("schedule", { when: "in 10 minutes", request: "Tell the user the build is done" }), reply.text("Scheduled."));
  await h.ingest({ channel: "cli", chatId: "local", senderId: "me", text: "tell me on telegram in 10 minutes" });
  expect(toolOutput(1)).toMatch(/the result goes to telegram chat 1001;/);
  expect(h.core.jobs.live()[0]!.target).toEqual({ channel: "telegram", chatId: TELEGRAM_OWNER });
  expect(h.core.jobs.live()[0]!.origin).toEqual({ channel: "cli", conversation: "cli:local:", senderId: "me", role: "operator" });
});

test("without default_target a command-line job needs a target; the owner's memory is one on every channel", async () => {
  h = await startHarness({ channels: { telegram: new RecordingChannel(), cli: new RecordingChannel() } });
  h.fake.reply(
    reply.toolCall("schedule", { when: "in 10 minutes", request: "x" }),
    reply.text("?"),
    reply.toolCall("remember", { text: "The owner's cat is called Miso" }),
    reply.text("Noted."),
    reply.text("Miso!"),
  );
  await h.ingest({ channel: "cli", chatId: "local", senderId: "me", text: "remind me" });
  expect(toolOutput(1)).toContain('cannot receive a message later: give target as "<channel>:<chat id>"');
  await h.ingest({ channel: "cli", chatId: "local", senderId: "me", text: "remember my cat is Miso" });
  await h.ingest({ text: "what's my cat called?" });
  expect(h.fake.requests[4]!.body.instructions).toMatch(/## What you remember \(relevant to this message\)\n- The owner's cat is called Miso/);
  expect(toolNames(h.fake.requests[4]!.body)).toEqual(expect.arrayContaining(["remember", "recall", "forget", "schedule", "list_jobs", "cancel_job"]));
});

test("with memory off, no memory tools and no memory section", async () => {
  h = await startHarness({ toml: `${DEFAULT_CHANNELS_TOML}\n[fermix_core.memory]\nenabled = false\n` });
  h.core.memory.add("owner", "The owner's cat is called Miso", "telegram:c1:");
  h.fake.reply(reply.text("hm"));
  await h.ingest({ text: "what's my cat called?" });
  expect(toolNames(h.fake.requests[0]!.body)).not.toContain("remember");
  expect(h.fake.requests[0]!.body.instructions).not.toContain("Miso");
});

test("a job's run is judged by where its maker stands when it runs: after the owner changes, the former owner's job gets an allowed sender's tools", async () => {
  h = await startHarness();
  h.fake.reply(reply.toolCall("schedule", { when: "in 1 hour", request: "Tidy the notes folder" }), reply.text("Will do."));
  // In the owner's direct chat (its id is the owner's), where the owner's turns get every tool.
  await h.ingest({ chatId: TELEGRAM_OWNER, text: "tidy my notes in an hour" });
  expect(toolNames(h.fake.requests[0]!.body)).toContain("read_file");
  // A reload: the friend is the owner now, and the former owner only an allowed sender.
  h.reconfigure(`
[fermix_channels.telegram]
enabled = true
bot_token = "123456:test-token"
owner_user_id = "${TELEGRAM_FRIEND}"
allowed_user_ids = ["${TELEGRAM_OWNER}"]

[fermix_channels.acp]
enabled = false
`);
  h.fake.reply(reply.text("Done."));
  h.core.scheduler.start();
  h.core.db.run("UPDATE jobs SET due_at = ?1", [Date.now() + 50]);
  h.core.scheduler.wake();
  await h.telegram.waitForText((t) => t.includes("Done."));
  const tools = toolNames(h.fake.requests.at(-1)!.body);
  expect(h.fake.requests.at(-1)!.body.input?.some((i) => JSON.stringify(i).includes("Tidy the notes folder"))).toBe(true);
  for (const name of ["read_file", "write_file", "run_command", "send_attachment"]) expect(tools).not.toContain(name);
  expect(tools).toContain("remember");
});
