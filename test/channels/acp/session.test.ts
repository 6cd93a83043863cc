/** Prompts as the gateway's common message, and who may use which session: on data. */
import { describe, expect, test } from "bun:test";
import { fileLine } from "../../../src/channels/acp/port.ts";
import { ACP_SENDER, promptMessage, SessionRegistry } from "../../../src/channels/acp/session.ts";
import { conversationKey } from "../../../src/message/index.ts";

describe("promptMessage", () => {
  test("text blocks become the text; a leading slash stays text", () => {
    const { message, images } = promptMessage("s1", [{ type: "text", text: "/help" }], 1000);
    expect(message).toMatchObject({ channel: "acp", chatId: "s1", senderId: ACP_SENDER, text: "/help", media: [], receivedAt: 1000 });
    expect(message.threadId).toBeUndefined();
    expect(images.size).toBe(0);
  });

  test("images become media whose bytes are held for fetchMedia; links become lines", () => {
    const data = Buffer.from([1, 2, 3, 4]).toString("base64");
    const { message, images } = promptMessage("s1", [
      { type: "text", text: "look at" },
      { type: "resource_link", name: "main.ts", uri: "file:///src/main.ts" },
      { type: "image", mimeType: "image/png", data },
      { type: "audio", mimeType: "audio/wav", data },
    ]);
    expect(message.text).toBe("look at\n[main.ts](file:///src/main.ts)");
    expect(message.media).toHaveLength(1);
    const [media] = message.media;
    expect(media).toMatchObject({ kind: "image", mime: "image/png", declaredSize: 4 });
    expect([...images.get(media!.ref)!.bytes]).toEqual([1, 2, 3, 4]);
  });

  test("an embedded text resource is read into the text", () => {
    const { message } = promptMessage("s1", [{ type: "resource", resource: { uri: "file:///a.txt", text: "contents" } }]);
    expect(message.text).toBe("file:///a.txt:\n```\ncontents\n```");
  });

  test("every prompt is a new message id", () => {
    const a = promptMessage("s1", [{ type: "text", text: "x" }]).message.messageId;
    const b = promptMessage("s1", [{ type: "text", text: "x" }]).message.messageId;
    expect(a).not.toBe(b);
  });
});

describe("SessionRegistry", () => {
  test("each session is its own conversation, visible only to the connection that opened it", () => {
    const registry = new SessionRegistry();
    const a = registry.open(1, "/tmp", async () => {});
    const b = registry.open(2, "/tmp", async () => {});
    expect(a.id).not.toBe(b.id);
    expect(a.conversation).toBe(conversationKey({ channel: "acp", chatId: a.id }));
    expect(registry.find(a.id, 1)).toBe(a);
    expect(registry.find(a.id, 2)).toBeUndefined();
    expect(registry.find(a.id)).toBe(a);
    expect(registry.ownedBy(2)).toEqual([b]);
    registry.remove(a.id);
    expect(registry.size).toBe(1);
  });

  test("a session's updates carry its id", async () => {
    const registry = new SessionRegistry();
    const seen: string[] = [];
    const session = registry.open(1, "/tmp", async (_update, id) => void seen.push(id));
    await session.updates.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } });
    expect(seen).toEqual([session.id]);
  });
});

test("a file reply is one line naming it", () => {
  expect(fileLine({ filename: "a.pdf", path: "/w/a.pdf", caption: "the plan" })).toBe("📎 a.pdf — the plan (/w/a.pdf)");
  expect(fileLine({ filename: "a.pdf", path: "/w/a.pdf" })).toBe("📎 a.pdf (/w/a.pdf)");
});
