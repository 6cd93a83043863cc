/** The gateway's seven steps and every short circuit, as the sender of a message would notice them. */
import { afterEach, describe, expect, test } from "bun:test";
import { reply, userText } from "../fakes/model-server.ts";
import { type Harness, startHarness, TELEGRAM_FRIEND, TELEGRAM_STRANGER } from "../helpers/gateway.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const image = { kind: "image" as const, mime: "image/jpeg", declaredSize: 2048, ref: "file-1" };
const voice = { kind: "voice" as const, mime: "audio/ogg", declaredSize: 4096, ref: "voice-1" };

describe("short circuits", () => {
  test("an unauthorized sender gets nothing: no reply, no download, no model call", async () => {
    h = await startHarness();
    h.fake.fallback(reply.text("should never be asked"));
    const outcome = await h.ingest({ senderId: TELEGRAM_STRANGER, text: "hi, who are you?", media: [image] });
    expect(outcome).toBe("dropped");
    expect(h.telegram.actions).toEqual([]);
    expect(h.telegram.fetched).toEqual([]);
    expect(h.fake.requests).toHaveLength(0);
    // Not even a command gets through.
    expect(await h.ingest({ senderId: TELEGRAM_STRANGER, text: "/whoami" })).toBe("dropped");
    expect(h.telegram.actions).toEqual([]);
  });

  test("a message with no text and no media (or only a sticker) is answered 'looks empty' and no model is called", async () => {
    h = await startHarness();
    expect(await h.ingest({ text: "   " })).toBe("empty");
    expect(await h.ingest({ text: "", media: [{ kind: "sticker", ref: "sticker-1" }] })).toBe("empty");
    const texts = h.telegram.texts();
    expect(texts).toHaveLength(2);
    for (const text of texts) expect(text).toContain("looks empty");
    expect(h.fake.requests).toHaveLength(0);
    expect(h.telegram.fetched).toEqual([]);
  });

  test("a captionless image is actionable: downloaded and given to the model as image content", async () => {
    h = await startHarness();
    h.fake.reply(reply.text("A small test picture."));
    expect(await h.ingest({ text: "", media: [image] })).toBe("answered");
    expect(h.telegram.fetched).toHaveLength(1);
    const [request] = await h.fake.waitForRequests(1);
    const user = request!.body.input!.at(-1)!;
    expect(user.content).toContainEqual(expect.objectContaining({ type: "input_image" }));
    expect(JSON.stringify(user.content)).toContain(Buffer.from(h.telegram.mediaBytes).toString("base64"));
    expect(h.telegram.texts().join("\n")).toContain("A small test picture.");
  });

  test("an image over the channel's cap is refused by its declared size, before any download", async () => {
    h = await startHarness();
    expect(await h.ingest({ text: "look", media: [{ ...image, declaredSize: 50 * 1024 * 1024 }] })).toBe("refused");
    expect(h.telegram.fetched).toEqual([]);
    expect(h.fake.requests).toHaveLength(0);
    expect(h.telegram.texts().join("\n")).toMatch(/limit/);
  });

  test("an empty completion is answered 'try again' and never written to history", async () => {
    h = await startHarness();
    h.fake.reply(reply.empty(), (request) => reply.text(`history had ${request.body.input!.length} items`));
    expect(await h.ingest({ text: "first question" })).toBe("empty_completion");
    expect(h.telegram.texts()).toHaveLength(1);
    expect(h.telegram.texts()[0]).toContain("try again");
    expect(h.core.conversations.history("telegram:c1:").map((m) => m.role)).not.toContain("assistant");

    // The next turn's model input has no empty assistant message in it.
    expect(await h.ingest({ text: "second question" })).toBe("answered");
    const second = h.fake.requests[1]!.body.input!;
    const assistant = second.filter((item) => item.role === "assistant");
    expect(assistant).toEqual([]);
  });

  test("a provider failure is answered with the class message; the provider's own words and URL stay in the log", async () => {
    h = await startHarness();
    h.fake.reply(reply.status(400, "model fake-model does not exist"));
    expect(await h.ingest({ text: "hello?" })).toBe("failed");
    const [text] = h.telegram.texts();
    expect(text).toContain("model provider refused the request");
    expect(text).toContain("fermix doctor");
    expect(text).not.toContain("does not exist");
    expect(text).not.toMatch(/https?:|127\.0\.0\.1|\.\./);
  });

  test("a connection dropped mid-stream is a provider failure reply, not silence", async () => {
    h = await startHarness();
    h.fake.reply(reply.drop("Half an ans"));
    expect(await h.ingest({ text: "hello?" })).toBe("failed");
    expect(h.telegram.texts()).toHaveLength(1);
    expect(h.telegram.texts()[0]).toContain("provider");
  });

  test("while the agent restarts the turn gets 'restart in progress' and dispatcher.agent_unavailable", async () => {
    h = await startHarness();
    h.fake.fallback(reply.text("back again"));
    const restarted = h.core.agents.restart("test");
    expect(await h.ingest({ text: "are you there?" })).toBe("restarting");
    expect(h.telegram.texts()).toHaveLength(1);
    expect(h.telegram.texts()[0]).toContain("restart in progress");
    expect(h.eventsNamed("dispatcher.agent_unavailable")).toEqual([expect.objectContaining({ metadata: { channel: "telegram" } })]);
    expect(h.fake.requests).toHaveLength(0);
    await restarted;
    expect(await h.ingest({ text: "now?" })).toBe("answered");
    expect(h.telegram.texts().at(-1)).toContain("back again");
  });

  test("an image with a model configured vision = false fails loud with a reply and no download", async () => {
    h = await startHarness({ provider: "vision = false" });
    expect(await h.ingest({ text: "what is this?", media: [image] })).toBe("refused");
    const [text] = h.telegram.texts();
    expect(text).toMatch(/image/i);
    expect(text).toContain("not support");
    expect(h.telegram.fetched).toEqual([]);
    expect(h.fake.requests).toHaveLength(0);
  });

  test("a voice note with no transcription key is answered with a pointer to `fermix setup` (never a silent drop), nothing downloaded", async () => {
    h = await startHarness();
    expect(await h.ingest({ text: "", media: [voice] })).toBe("refused");
    const [text] = h.telegram.texts();
    expect(text).toContain("fermix setup");
    expect(h.telegram.fetched).toEqual([]);
    expect(h.fake.requests).toHaveLength(0);
    expect(h.eventsNamed("transcription.message")).toEqual([
      expect.objectContaining({ metadata: { channel: "telegram", backend: "openai", status: "refused", reason: "no_key" } }),
    ]);
  });

  test("an allowed (non-owner) user gets ordinary turns", async () => {
    h = await startHarness();
    h.fake.reply(reply.text("pong"));
    expect(await h.ingest({ senderId: TELEGRAM_FRIEND, text: "ping" })).toBe("answered");
    expect(h.telegram.texts()[0]).toContain("pong");
    // Their words reach the model as theirs, marked: not the owner's instructions.
    expect(userText(h.fake.requests[0]!)).toBe(`<untrusted source="message from (id ${TELEGRAM_FRIEND}), who is not the owner">\nping\n</untrusted>`);
  });
});

describe("the reply port", () => {
  test("a reply goes back to the chat and thread the message came from", async () => {
    h = await startHarness();
    h.fake.reply(reply.text("in the thread"));
    await h.ingest({ chatId: "group-7", threadId: "topic-3", text: "hi" });
    const sent = h.telegram.actions.find((a) => a.kind === "text");
    expect(sent?.target).toEqual(expect.objectContaining({ chatId: "group-7", threadId: "topic-3" }));
  });
});
