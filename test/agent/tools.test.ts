/** The send_attachment duplicate cache on a manual clock: 60 s, keyed on channel, chat, kind, caption, filename, MIME and bytes. */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendAttachmentTool } from "../../src/agent/tools/send_attachment.ts";
import type { ToolContext } from "../../src/agent/tools/types.ts";
import type { OutboundMedia, ReplyPort } from "../../src/message/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { IdempotencyStore } from "../../src/store/idempotency.ts";

let root: string;
let workspace: string;
let db: Database;
let now: number;
let sent: OutboundMedia[];
let idempotency: IdempotencyStore;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-tools-"));
  workspace = join(root, "workspace");
  mkdirSync(workspace);
  db = openDatabase(join(root, "fermix.db"));
  now = 1_700_000_000_000;
  idempotency = new IdempotencyStore(db, () => now);
  sent = [];
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  const port = {
    capabilities: { edit: false, delete: false, react: false, media: true, typing: false },
    sendMedia: async (media: OutboundMedia) => {
      sent.push(media);
      return { id: `m${sent.length}` };
    },
  } as unknown as ReplyPort;
  return {
    port,
    channel: "telegram",
    conversation: "telegram:42:",
    senderId: "42",
    role: "operator",
    target: { chatId: "42" },
    workspace,
    idempotency,
    signal: new AbortController().signal,
    effects: { reacted: false, attachments: 0 },
    say: async () => {},
    ...overrides,
  };
}

const send = (args: Record<string, unknown>, ctx = context()) => sendAttachmentTool.run(args, ctx);

describe("duplicate-send cache", () => {
  test("the same send within 60 s goes once; after 60 s it goes again", async () => {
    writeFileSync(join(workspace, "a.txt"), "alpha");
    expect(await send({ path: "a.txt", caption: "hi" })).toBe("sent a.txt");
    now += 59_000;
    expect(await send({ path: "a.txt", caption: "hi" })).toContain("already sent");
    expect(sent).toHaveLength(1);
    now += 1_001;
    expect(await send({ path: "a.txt", caption: "hi" })).toBe("sent a.txt");
    expect(sent).toHaveLength(2);
  });

  test("a different caption, chat, channel or file content is a different send", async () => {
    const file = join(workspace, "a.txt");
    writeFileSync(file, "alpha");
    await send({ path: "a.txt", caption: "hi" });
    await send({ path: "a.txt", caption: "other caption" });
    await send({ path: "a.txt", caption: "hi" }, context({ target: { chatId: "43" } }));
    await send({ path: "a.txt", caption: "hi" }, context({ channel: "slack" }));
    writeFileSync(file, "beta");
    await send({ path: "a.txt", caption: "hi" });
    expect(sent).toHaveLength(5);
    // And the same again is suppressed, whichever of them it is.
    expect(await send({ path: "a.txt", caption: "other caption" })).toContain("sent a.txt");
    expect(sent).toHaveLength(6);
    expect(await send({ path: "a.txt", caption: "other caption" })).toContain("already sent");
    expect(sent).toHaveLength(6);
  });

  test("a send that failed is not remembered: retrying it goes through", async () => {
    writeFileSync(join(workspace, "a.txt"), "alpha");
    let fail = true;
    const flaky = context();
    const real = flaky.port.sendMedia;
    flaky.port = {
      ...flaky.port,
      capabilities: flaky.port.capabilities,
      sendMedia: async (media) => {
        if (fail) throw new Error("platform hiccup");
        return real(media);
      },
    } as ReplyPort;
    await expect(send({ path: "a.txt" }, flaky)).rejects.toThrow("platform hiccup");
    fail = false;
    expect(await send({ path: "a.txt" }, flaky)).toBe("sent a.txt");
    expect(sent).toHaveLength(1);
  });

  test("the cache survives a restart (it lives in SQLite)", async () => {
    writeFileSync(join(workspace, "a.txt"), "alpha");
    await send({ path: "a.txt" });
    db.close();
    db = openDatabase(join(root, "fermix.db"));
    idempotency = new IdempotencyStore(db, () => now);
    expect(await send({ path: "a.txt" })).toContain("already sent");
    expect(sent).toHaveLength(1);
  });
});
