/** Slash commands (seed "Channels", table "Slash commands") as a user of a chat sees them. */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseCommand } from "../../src/gateway/commands/parse.ts";
import { type RecordedRequest, reply, userText, userTexts } from "../fakes/model-server.ts";
import { type Harness, startHarness, TELEGRAM_FRIEND, TELEGRAM_OWNER, until, within } from "../helpers/gateway.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const echo = (request: RecordedRequest) => reply.text(`echo: ${userText(request)}`);

describe("parsing", () => {
  test("commands, Telegram's /cmd@botname form, arguments; other text is not a command", () => {
    expect(parseCommand("/help")).toEqual({ name: "help", args: "" });
    expect(parseCommand("/whoami@fermix_bot")).toEqual({ name: "whoami", args: "" });
    expect(parseCommand("/bg@FermixBot summarise the news")).toEqual({ name: "bg", args: "summarise the news" });
    expect(parseCommand("  /Background  two\nlines ")).toEqual({ name: "background", args: "two\nlines" });
    expect(parseCommand("please /help")).toBeNull();
    expect(parseCommand("/ not a command")).toBeNull();
    expect(parseCommand("/usr/bin/env")).toBeNull();
  });
});

describe("/help and /whoami", () => {
  test("/help lists the commands; operator commands only for the owner", async () => {
    h = await startHarness();
    await h.ingest({ text: "/help" });
    const owner = h.telegram.texts().at(-1)!;
    for (const name of ["/help", "/whoami", "/new", "/compact", "/background", "/tasks", "/stop"]) expect(owner).toContain(name);
    await h.ingest({ senderId: TELEGRAM_FRIEND, text: "/help" });
    const friend = h.telegram.texts().at(-1)!;
    expect(friend).toContain("/whoami");
    expect(friend).not.toContain("/stop");
    expect(h.fake.requests).toHaveLength(0);
  });

  test("/whoami shows the sender's stable id, also in the /whoami@botname form", async () => {
    h = await startHarness();
    await h.ingest({ text: "/whoami@fermix_bot" });
    expect(h.telegram.texts().at(-1)).toContain(TELEGRAM_OWNER);
    expect(h.telegram.texts().at(-1)).toContain("owner");
    expect(h.fake.requests).toHaveLength(0);
  });

  test("an unknown /word reaches the agent as ordinary text", async () => {
    h = await startHarness();
    h.fake.reply(echo);
    expect(await h.ingest({ text: "/frobnicate the widget" })).toBe("answered");
    expect(userText(h.fake.requests[0]!)).toBe("/frobnicate the widget");
    expect(h.telegram.texts().at(-1)).toContain("echo: /frobnicate the widget");
  });
});

describe("/new and /clear", () => {
  for (const command of ["/new", "/clear"]) {
    test(`${command} starts a fresh window: the next turn does not see earlier messages`, async () => {
      h = await startHarness();
      h.fake.fallback(echo);
      await h.ingest({ text: "my name is Ada" });
      expect(await h.ingest({ text: command })).toBe("command");
      expect(h.telegram.texts().at(-1)).toMatch(/new conversation/i);
      await h.ingest({ text: "what is my name?" });
      expect(userTexts(h.fake.requests.at(-1)!)).toEqual(["what is my name?"]);
      // Another conversation is untouched by it.
      await h.ingest({ chatId: "c2", text: "other chat" });
      await h.ingest({ chatId: "c2", text: "still here?" });
      expect(userTexts(h.fake.requests.at(-1)!)).toEqual(["other chat", "still here?"]);
    });
  }
});

describe("/stop", () => {
  test("aborts the in-flight provider request, clears the queue, and the interrupted request is context, not retried", async () => {
    h = await startHarness();
    h.fake.reply(reply.hang("I was start"));
    const first = h.ingest({ text: "write me a long essay" });
    const [hanging] = await h.fake.waitForRequests(1);
    const second = h.ingest({ text: "and a poem" });

    // /stop runs at once, ahead of the queue (it would wait forever behind the hanging turn otherwise).
    expect(await h.ingest({ text: "/stop" })).toBe("command");
    await within(hanging!.untilAborted, "the provider request to be aborted");
    expect(hanging!.aborted).toBe(true);
    expect(await first).toBe("cancelled");
    expect(await second).toBe("cancelled");
    const stopped = h.telegram.texts().at(-1)!;
    expect(stopped).toContain("Stopped");
    expect(stopped).toContain("1 running reply");
    expect(stopped).toContain("1 queued message");
    // The queued message never reached the model; nothing but the /stop reply was sent.
    expect(h.fake.requests).toHaveLength(1);
    expect(h.telegram.texts()).toEqual([stopped]);

    h.fake.reply(echo);
    expect(await h.ingest({ text: "something short instead" })).toBe("answered");
    expect(h.fake.requests).toHaveLength(2);
    expect(userTexts(h.fake.requests[1]!)).toEqual(["write me a long essay", "something short instead"]);
  });

  test("with nothing running it says so", async () => {
    h = await startHarness();
    await h.ingest({ text: "/stop" });
    expect(h.telegram.texts()).toEqual([expect.stringContaining("Nothing was running")]);
  });
});

describe("/background and /tasks", () => {
  test("runs detached and posts the result to the same conversation", async () => {
    h = await startHarness();
    h.fake.reply(reply.text("The answer is 42."));
    expect(await h.ingest({ chatId: "c9", text: "/bg work out the answer" })).toBe("command");
    expect(h.telegram.texts("c9")[0]).toContain("#1");
    const result = await h.telegram.waitForText((t) => t.includes("The answer is 42."));
    expect(result).toContain("Background task #1");
    expect(h.telegram.texts("c9")).toContain(result);
    expect(userText(h.fake.requests[0]!)).toBe("work out the answer");
    await until(() => h.core.background.active === 0, "the task to finish");
    await h.ingest({ chatId: "c9", text: "/tasks" });
    expect(h.telegram.texts("c9").at(-1)).toContain("#1 done");
  });

  test("a file the background work sends reaches the chat through the durable outbox", async () => {
    h = await startHarness();
    mkdirSync(h.core.loaded.paths.workspace, { recursive: true });
    writeFileSync(join(h.core.loaded.paths.workspace, "chart.txt"), "a chart");
    h.fake.reply(reply.toolCall("send_attachment", { path: "chart.txt" }), reply.text("Chart attached."));
    await h.ingest({ chatId: "c9", text: "/bg draw the chart" });
    await h.telegram.waitForText((t) => t.includes("Chart attached."));
    const media = h.telegram.visible().filter((a) => a.kind === "media");
    expect(media).toEqual([expect.objectContaining({ target: expect.objectContaining({ chatId: "c9" }) })]);
    const recorded = h.core.db.query("SELECT state FROM outbox WHERE kind = 'media'").all();
    expect(recorded).toEqual([{ state: "sent" }]);
  });

  test("at most 8 run at once: the 9th is refused with a message naming the limit; /tasks lists them; /stop stops them", async () => {
    h = await startHarness();
    h.fake.fallback(reply.hang());
    for (let i = 1; i <= 8; i++) {
      expect(await h.ingest({ text: `/background job ${i}` })).toBe("command");
      expect(h.telegram.texts().at(-1)).toContain(`#${i}`);
    }
    const requests = await h.fake.waitForRequests(8);

    await h.ingest({ text: "/background job 9" });
    const refused = h.telegram.texts().at(-1)!;
    expect(refused).toContain("8");
    expect(refused).not.toContain("#9");
    expect(h.core.background.active).toBe(8);

    // The limit is daemon-wide: another conversation is refused too.
    await h.ingest({ chatId: "c2", text: "/bg job 10" });
    expect(h.telegram.texts("c2").at(-1)).toContain("8");

    await h.ingest({ text: "/tasks" });
    const tasks = h.telegram.texts().at(-1)!;
    expect(tasks).toContain("8 of 8");
    for (let i = 1; i <= 8; i++) expect(tasks).toContain(`#${i} running: job ${i}`);

    await h.ingest({ text: "/stop" });
    expect(h.telegram.texts().at(-1)).toContain("8 background tasks");
    await within(Promise.all(requests.map((r) => r.untilAborted)), "every background request to be aborted");
    await until(() => h.core.background.active === 0, "the tasks to stop");
    await h.ingest({ text: "/tasks" });
    expect(h.telegram.texts().at(-1)).toContain("stopped");
    // A stopped task posts no result.
    expect(h.telegram.texts().some((t) => t.includes("finished"))).toBe(false);
  });
});

describe("compaction", () => {
  const summarising = (request: RecordedRequest) =>
    String(request.body.instructions ?? "").startsWith("Summarise") ? reply.text("SUMMARY: Ada likes tea.") : echo(request);

  test("/compact summarises the older messages now; the next turn sees the summary instead of them", async () => {
    h = await startHarness();
    h.fake.fallback(summarising);
    for (const text of ["I am Ada", "I like tea", "I live in Paris"]) await h.ingest({ text });
    expect(await h.ingest({ text: "/compact" })).toBe("command");
    expect(h.telegram.texts().at(-1)).toContain("Compacted");
    const summary = h.fake.requests.at(-1)!;
    expect(summary.body.instructions).toStartWith("Summarise");
    expect(JSON.stringify(summary.body.input)).toContain("I am Ada");

    await h.ingest({ text: "what do I drink?" });
    const next = h.fake.requests.at(-1)!;
    expect(next.body.instructions).toContain("SUMMARY: Ada likes tea.");
    expect(userTexts(next)).toEqual(["I like tea", "I live in Paris", "what do I drink?"]);
  });

  test("/compact with too little history says there is nothing to compact", async () => {
    h = await startHarness();
    await h.ingest({ text: "/compact" });
    expect(h.telegram.texts().at(-1)).toContain("Nothing to compact");
    expect(h.fake.requests).toHaveLength(0);
  });

  test("after a turn that reaches threshold × context_window, the older messages are summarised automatically", async () => {
    // 60 tokens × 0.85 ≈ 51 tokens ≈ 204 characters of history.
    h = await startHarness({ provider: "context_window = 60" });
    h.fake.fallback(summarising);
    const long = (n: number) => `message ${n} ${"x".repeat(40)}`;
    await h.ingest({ text: long(1) });
    await h.ingest({ text: long(2) });
    expect(h.fake.requests.filter((r) => String(r.body.instructions).startsWith("Summarise"))).toHaveLength(0);
    await h.ingest({ text: long(3) });
    const summaries = h.fake.requests.filter((r) => String(r.body.instructions).startsWith("Summarise"));
    expect(summaries).toHaveLength(1);
    await h.ingest({ text: "and now?" });
    const next = h.fake.requests.find((r) => userText(r) === "and now?")!;
    expect(next.body.instructions).toContain("SUMMARY: Ada likes tea.");
    expect(userTexts(next)).not.toContain(long(1));
  });

  test("with compaction disabled nothing is summarised", async () => {
    h = await startHarness({ provider: "context_window = 60", toml: `[fermix_core.compaction]\nenabled = false\n` });
    h.fake.fallback(summarising);
    for (let i = 0; i < 4; i++) await h.ingest({ text: `message ${i} ${"x".repeat(40)}` });
    expect(h.fake.requests.filter((r) => String(r.body.instructions).startsWith("Summarise"))).toHaveLength(0);
  });
});
