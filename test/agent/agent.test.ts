/** The MainAgent's turn loop through the gateway: tools per channel, reactions, attachments, the persona. */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_SOUL } from "../../src/agent/prompt.ts";
import { cliPort } from "../../src/channels/cli/port.ts";
import type { ServerEvent } from "../../src/channels/cli/protocol.ts";
import { cliMessage } from "../../src/channels/cli/turn.ts";
import { type RecordedRequest, reply } from "../fakes/model-server.ts";
import { type Harness, NO_REACTIONS, RecordingChannel, startHarness, TELEGRAM_LIKE, toolNames } from "../helpers/gateway.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** The function_call_output items a request carried back to the model. */
const toolOutputs = (request: RecordedRequest): string[] => request.body.input!.filter((i) => i.type === "function_call_output").map((i) => i.output ?? "");
const reactSpec = (request: RecordedRequest) => (request.body.tools ?? []).find((t) => t.name === "react");

describe("the react tool", () => {
  test("offered with the channel's fixed emoji set where reactions are limited (Telegram, Slack)", async () => {
    h = await startHarness({ channels: { telegram: new RecordingChannel(TELEGRAM_LIKE) } });
    h.fake.reply(reply.text("ok"));
    await h.ingest({ text: "hi" });
    const spec = reactSpec(h.fake.requests[0]!);
    expect(spec).toBeDefined();
    expect(spec!.parameters!.properties!.emoji!.enum).toEqual([...(TELEGRAM_LIKE.react as string[])]);
  });

  test("offered for any single emoji where the channel accepts any", async () => {
    h = await startHarness({ channels: { telegram: new RecordingChannel({ ...TELEGRAM_LIKE, react: "any" }) } });
    h.fake.reply(reply.text("ok"));
    await h.ingest({ text: "hi" });
    const spec = reactSpec(h.fake.requests[0]!);
    expect(spec).toBeDefined();
    expect(spec!.parameters!.properties!.emoji!.enum).toBeUndefined();
  });

  test("not offered where the channel has no reactions, and the model is told to acknowledge in text", async () => {
    h = await startHarness({ channels: { telegram: new RecordingChannel(NO_REACTIONS) } });
    h.fake.reply(reply.text("ok"));
    await h.ingest({ text: "thanks!" });
    const [request] = h.fake.requests;
    expect(toolNames(request!.body)).not.toContain("react");
    expect(toolNames(request!.body)).toContain("send_attachment");
    expect(request!.body.instructions).toContain("Reactions are not available here");
  });

  test("not offered on the command line, where an acknowledgement comes back as a short line of text", async () => {
    h = await startHarness();
    h.fake.reply(reply.text("You're welcome."));
    const events: ServerEvent[] = [];
    expect(await h.core.gateway.ingest(cliMessage("thanks"), { port: cliPort((e) => events.push(e)) })).toBe("answered");
    expect(toolNames(h.fake.requests[0]!.body)).not.toContain("react");
    expect(events).toContainEqual({ type: "message", text: expect.stringContaining("You're welcome.") });
  });

  test("the chat-completions wire format offers it the same way", async () => {
    h = await startHarness({ api: "chat" });
    h.fake.reply(reply.text("ok"));
    await h.ingest({ text: "hi" });
    expect(toolNames(h.fake.requests[0]!.body)).toEqual(expect.arrayContaining(["react", "send_attachment"]));
  });

  test("a turn that only reacts puts the reaction on the user's message and sends no text", async () => {
    h = await startHarness();
    h.fake.reply(reply.toolCall("react", { emoji: "👍" }), reply.empty());
    const message = h.message({ text: "ok thanks" });
    expect(await h.core.gateway.ingest(message)).toBe("reacted");
    expect(h.telegram.visible()).toEqual([{ kind: "react", target: expect.anything(), messageId: message.messageId, emoji: "👍" }]);
    expect(toolOutputs(h.fake.requests[1]!)).toEqual(["reacted with 👍"]);
  });

  test("an emoji outside the allowed set is refused back to the model, which can answer in text instead", async () => {
    h = await startHarness();
    h.fake.reply(reply.toolCall("react", { emoji: "🦄" }), reply.text("Noted!"));
    expect(await h.ingest({ text: "ok" })).toBe("answered");
    expect(toolOutputs(h.fake.requests[1]!)[0]).toContain("not allowed");
    expect(h.telegram.visible().map((a) => a.kind)).toEqual(["text"]);
  });
});

describe("send_attachment", () => {
  const workspaceFile = (name: string, content: string) => {
    const path = join(h.core.loaded.paths.workspace, name);
    mkdirSync(h.core.loaded.paths.workspace, { recursive: true });
    writeFileSync(path, content);
    return path;
  };

  test("sends a file from the workspace with its caption, through the outbox", async () => {
    h = await startHarness();
    const path = workspaceFile("report.txt", "quarterly numbers");
    h.fake.reply(reply.toolCall("send_attachment", { path: "report.txt", caption: "the report" }), reply.text("Here it is."));
    const message = h.message({ text: "send me the report" });
    expect(await h.core.gateway.ingest(message)).toBe("answered");
    const media = h.telegram.visible().filter((a) => a.kind === "media");
    expect(media).toEqual([
      expect.objectContaining({
        media: expect.objectContaining({ filename: "report.txt", caption: "the report", mime: expect.stringContaining("text/plain") }),
      }),
    ]);
    expect(readFileSync((media[0] as { media: { path: string } }).media.path, "utf8")).toBe("quarterly numbers");
    expect(h.telegram.texts().join("\n")).toContain("Here it is.");
    // The file went through the durable outbox like every other outbound message.
    const parts = h.core.outbox.parts(`telegram:c1:${message.messageId}`);
    expect(parts.filter((p) => p.payload.kind === "media").map((p) => p.state)).toEqual(["sent"]);
    expect(path).toStartWith(h.core.loaded.paths.workspace);
  });

  test("refuses paths outside the workspace, including through a symlink, and tells the model why", async () => {
    h = await startHarness();
    const secret = join(h.home, "outside-secret.txt");
    writeFileSync(secret, "do not send");
    workspaceFile("placeholder.txt", "x");
    symlinkSync(secret, join(h.core.loaded.paths.workspace, "link.txt"));
    h.fake.reply(
      reply.toolCalls(
        { name: "send_attachment", arguments: { path: "../outside-secret.txt" } },
        { name: "send_attachment", arguments: { path: secret } },
        { name: "send_attachment", arguments: { path: "link.txt" } },
        { name: "send_attachment", arguments: { path: "/etc/hostname" } },
      ),
      reply.text("I can't send that one."),
    );
    expect(await h.ingest({ text: "send me the secret" })).toBe("answered");
    const outputs = toolOutputs(h.fake.requests[1]!);
    expect(outputs).toHaveLength(4);
    for (const output of outputs) expect(output).toMatch(/^error: .*(outside the workspace|no such file)/);
    expect(outputs.filter((o) => o.includes("outside the workspace")).length).toBeGreaterThanOrEqual(3);
    expect(h.telegram.visible().filter((a) => a.kind === "media")).toEqual([]);
  });

  test("the same file to the same chat within 60 s is sent once", async () => {
    h = await startHarness();
    workspaceFile("photo.png", "not really a png");
    const send = reply.toolCall("send_attachment", { path: "photo.png", caption: "look" });
    h.fake.reply(send, reply.text("Sent."), send, reply.text("Sent again?"));
    await h.ingest({ text: "send the photo" });
    await h.ingest({ text: "send the photo again" });
    expect(h.telegram.visible().filter((a) => a.kind === "media")).toHaveLength(1);
    expect(toolOutputs(h.fake.requests[3]!)[0]).toContain("already sent");
    // Another chat is another key.
    h.fake.reply(send, reply.text("Sent."));
    await h.ingest({ chatId: "c2", text: "send the photo" });
    expect(h.telegram.visible().filter((a) => a.kind === "media")).toHaveLength(2);
  });
});

describe("the persona and the loop", () => {
  test("SOUL.md is written with the shipped default on first run and is the system prompt; an edit applies at the next turn, no restart", async () => {
    h = await startHarness();
    const soulPath = h.core.loaded.paths.soul;
    expect(readFileSync(soulPath, "utf8")).toBe(DEFAULT_SOUL);
    h.fake.fallback(reply.text("ok"));
    await h.ingest({ text: "hi" });
    expect(h.fake.requests[0]!.body.instructions).toStartWith(DEFAULT_SOUL.trim());
    expect(h.fake.requests[0]!.body.instructions).toContain("telegram");

    writeFileSync(soulPath, "# Soul\n\nYou are Captain Fermix and speak like a pirate.\n");
    await h.ingest({ text: "hi again" });
    expect(h.fake.requests[1]!.body.instructions).toContain("speak like a pirate");
  });

  test("a model that keeps calling tools is stopped at the step limit with a note to the user", async () => {
    h = await startHarness();
    h.fake.fallback(reply.toolCall("lookup", { q: "again" }));
    expect(await h.ingest({ text: "loop forever" })).toBe("answered");
    expect(h.fake.requests).toHaveLength(8);
    expect(toolOutputs(h.fake.requests[1]!)[0]).toContain("no tool named lookup");
    expect(h.telegram.texts().at(-1)).toContain("too many tool steps");
  });
});
