/** The durable inbox and its idempotency keys, on a real SQLite file reopened as a restart would. */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InboundMessage } from "../../src/message/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { IdempotencyStore } from "../../src/store/idempotency.ts";
import { Inbox } from "../../src/store/inbox.ts";

let root: string;
let db: Database;
let inbox: Inbox;
let idempotency: IdempotencyStore;
let now = 1_700_000_000_000;

function reopen() {
  db?.close();
  db = openDatabase(join(root, "fermix.db"));
  idempotency = new IdempotencyStore(db, () => now);
  inbox = new Inbox(db, idempotency, () => now);
}
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-inbox-"));
  reopen();
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

const message = (id: string, text = `text of ${id}`): InboundMessage => ({
  channel: "slack",
  chatId: "D1",
  senderId: "U1",
  messageId: id,
  text,
  media: [],
  receivedAt: now,
});
const item = (id: string) => ({ key: `D1:${id}`, message: message(id) });

describe("inbox", () => {
  test("an accepted message stays until its turn is done, across a restart", async () => {
    const { fresh } = await inbox.accept("slack", [item("1"), item("2")]);
    expect(fresh.map((e) => e.message.messageId)).toEqual(["1", "2"]);
    inbox.complete([fresh[0]!.id]);
    reopen();
    expect(inbox.pending().map((e) => e.message)).toEqual([message("2")]);
  });

  test("a redelivery of an accepted id is a duplicate, also after its turn is done and after a restart", async () => {
    const { fresh } = await inbox.accept("slack", [item("1")]);
    expect((await inbox.accept("slack", [item("1")])).duplicates).toBe(1);
    inbox.complete(fresh.map((e) => e.id));
    reopen();
    expect(await inbox.accept("slack", [item("1")])).toEqual({ fresh: [], duplicates: 1 });
    // The same id on another channel is another message.
    expect((await inbox.accept("whatsapp", [item("1")])).fresh).toHaveLength(1);
  });

  test("two concurrent deliveries of one id are processed once", async () => {
    const results = await Promise.all([
      inbox.accept("slack", [item("9")]),
      inbox.accept("slack", [item("9")]),
      Promise.resolve(inbox.acceptNow("slack", [item("9")])),
    ]);
    expect(results.map((r) => r.fresh.length).reduce((a, b) => a + b)).toBe(1);
    expect(inbox.pending()).toHaveLength(1);
  });

  test("a failed hand-off forgets the key, so the platform's retry gets through", async () => {
    const { fresh } = await inbox.accept("slack", [item("5")]);
    inbox.release(fresh);
    expect(inbox.pending()).toEqual([]);
    expect((await inbox.accept("slack", [item("5")])).fresh).toHaveLength(1);
  });

  test("inbound keys are remembered for 24 hours", async () => {
    await inbox.accept("slack", [item("1")]);
    now += 24 * 60 * 60_000 - 1;
    expect((await inbox.accept("slack", [item("1")])).duplicates).toBe(1);
    now += 2;
    expect((await inbox.accept("slack", [item("1")])).fresh).toHaveLength(1);
  });
});
