/**
 * The durable outbox: every part recorded before it is sent, marked with the
 * platform's id after; a restart resumes what was never sent and never
 * re-sends a part that was (or may have been). The crash is a real SIGKILL of
 * a process writing to a real SQLite file.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import { Delivery } from "../../src/gateway/delivery.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { Telemetry } from "../../src/kernel/telemetry.ts";
import { FormattingRejected, type ReplyPort, type ReplyTarget } from "../../src/message/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { Outbox, type OutboxPayload } from "../../src/store/outbox.ts";
import { partsPresenter, REPLY, REPLY_KEY, TARGET } from "./fixtures/outbox-reply.ts";

let root: string;
let dbPath: string;
const open: Database[] = [];
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-outbox-"));
  dbPath = join(root, "fermix.db");
});
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  rmSync(root, { recursive: true, force: true });
});

/** A platform that records what it was sent, per target. */
function platform() {
  const sent: Array<{ target: ReplyTarget; text: string; plain: boolean }> = [];
  const port = (target: ReplyTarget): ReplyPort =>
    ({
      capabilities: { edit: false, delete: false, react: false, media: true, typing: false },
      async sendText(message: { text: string; plain: boolean }) {
        sent.push({ target, text: message.text, plain: message.plain });
        return { id: `p${sent.length}` };
      },
    }) as unknown as ReplyPort;
  return { sent, port };
}

/** The daemon's delivery after a (re)start, on the database file. */
function restart(rawPort: (target: ReplyTarget) => ReplyPort | undefined) {
  const db = openDatabase(dbPath);
  open.push(db);
  const outbox = new Outbox(db);
  const delivery = new Delivery({
    outbox,
    presenter: partsPresenter,
    channels: profileOf,
    rawPort: (_channel, target) => rawPort(target),
    spoolDir: join(root, "spool"),
    telemetry: new Telemetry(),
    log: createLogger({ FERMIX_LOG_LEVEL: "error" }),
  });
  return { db, outbox, delivery };
}

describe("outbox resume after SIGKILL mid-reply", () => {
  test("parts sent before the kill are not sent again, the one in flight is never re-sent, the rest are sent once", async () => {
    const child = Bun.spawn(["bun", join(import.meta.dir, "fixtures", "outbox-crash-child.ts"), dbPath, join(root, "spool")], {
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const decoder = new TextDecoder();
    const reader = child.stdout.getReader();
    while (!out.includes("sending part 3\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`child exited early: ${out}\n${await new Response(child.stderr).text()}`);
      out += decoder.decode(value, { stream: true });
    }
    child.kill("SIGKILL");
    expect(await child.exited).not.toBe(0);
    expect(out.split("\n").filter((l) => l.startsWith("sent "))).toEqual(["sent part 1", "sent part 2"]);

    const { sent, port } = platform();
    const first = restart(port);
    expect(await first.delivery.resume()).toEqual({ resumed: 1, unknown: 1 });
    await first.delivery.idle();
    expect(sent.map((s) => s.text)).toEqual(["part 4"]);
    expect(sent[0]!.target).toEqual(TARGET);
    expect(first.outbox.parts(REPLY_KEY).map((p) => p.state)).toEqual(["sent", "sent", "unknown", "sent"]);
    expect(first.outbox.parts(REPLY_KEY).map((p) => p.platformId)).toEqual(["platform-1", "platform-2", null, "p1"]);

    // Another restart has nothing left to do.
    first.db.close();
    open.pop();
    const second = restart(port);
    expect(await second.delivery.resume()).toEqual({ resumed: 0, unknown: 0 });
    expect(sent).toHaveLength(1);
  });

  test("a reply recorded but not yet sent when the process died is sent in full, once", async () => {
    const before = restart(() => undefined);
    before.delivery.record("telegram", TARGET, REPLY_KEY, REPLY);
    before.db.close();
    open.pop();

    const { sent, port } = platform();
    const after = restart(port);
    expect(await after.delivery.resume()).toEqual({ resumed: 4, unknown: 0 });
    await after.delivery.idle();
    expect(sent.map((s) => s.text)).toEqual(["part 1", "part 2", "part 3", "part 4"]);
    expect(await after.delivery.resume()).toEqual({ resumed: 0, unknown: 0 });
    expect(sent).toHaveLength(4);
  });

  test("a notice said again under the same key (a replayed short circuit or command) is not sent twice", async () => {
    const { sent, port } = platform();
    const { delivery } = restart(port);
    expect(await delivery.say("telegram", TARGET, "telegram:42:inbound-8:n0", REPLY, port(TARGET))).toBe("sent");
    expect(await delivery.say("telegram", TARGET, "telegram:42:inbound-8:n0", REPLY, port(TARGET))).toBe("sent");
    expect(sent.map((s) => s.text)).toEqual(["part 1", "part 2", "part 3", "part 4"]);
  });
});

describe("sending", () => {
  test("a part the platform rejects for its formatting is resent once as plain text", async () => {
    const sent: Array<{ text: string; plain: boolean }> = [];
    const picky = {
      capabilities: { edit: false, delete: false, react: false, media: true, typing: false },
      async sendText(message: { text: string; plain: boolean }) {
        if (!message.plain) throw new FormattingRejected("can't parse entities");
        sent.push(message);
        return { id: "ok" };
      },
    } as unknown as ReplyPort;
    const { delivery, outbox } = restart(() => picky);
    expect(await delivery.say("telegram", TARGET, "k1", "only part")).toBe("sent");
    expect(sent).toEqual([expect.objectContaining({ text: "only part", plain: true })]);
    expect(outbox.parts("k1").map((p) => p.state)).toEqual(["sent"]);
  });

  test("a failed part stops the reply: it and the parts after it are marked failed, not resumed later", async () => {
    let calls = 0;
    const failing = {
      capabilities: { edit: false, delete: false, react: false, media: true, typing: false },
      async sendText() {
        if (++calls === 2) throw new Error("chat not found");
        return { id: `p${calls}` };
      },
    } as unknown as ReplyPort;
    const { delivery, outbox } = restart(() => failing);
    expect(await delivery.say("telegram", TARGET, REPLY_KEY, REPLY)).toBe("failed");
    expect(outbox.parts(REPLY_KEY).map((p) => p.state)).toEqual(["sent", "failed", "failed", "failed"]);
    expect(calls).toBe(2);
    expect(await delivery.resume()).toEqual({ resumed: 0, unknown: 0 });
  });
});

describe("what each row is for", () => {
  const text = (t: string): OutboxPayload => ({ kind: "text", message: { text: t, notify: false, linkPreview: false, plain: true } });

  test("a row keeps the purpose it was recorded with, whatever its key looks like", () => {
    const db = openDatabase(dbPath);
    open.push(db);
    const outbox = new Outbox(db);
    // A key shaped like an old notice key is only an identity now: it reads back as what it was recorded as.
    outbox.record("bg:7:telegram:1:undelivered", "telegram", TARGET, [text("a result")], { purpose: "background" });
    outbox.record("telegram:42:inbound-9", "telegram", TARGET, [text("an answer")]);
    expect(outbox.parts("bg:7:telegram:1:undelivered").map((p) => p.purpose)).toEqual(["background"]);
    expect(outbox.parts("telegram:42:inbound-9").map((p) => p.purpose)).toEqual(["reply"]);
    expect(() => db.run("UPDATE outbox SET purpose = 'gossip'")).toThrow(/CHECK constraint/);
  });

  test("rows written before the purpose column get theirs from the key shapes of then", () => {
    const before = MIGRATIONS.filter((m) => m.version < 15);
    const old = openDatabase(dbPath, before);
    const keys = [
      "telegram:42:17",
      "telegram:42:17:n0",
      "telegram:42:17:n12",
      "telegram:42:17:undelivered",
      "telegram:42:17:n0:undelivered",
      "telegram:42:17:inline3",
      "bg:4:telegram:17",
      "bg:4:telegram:17:media",
      "bg:4:telegram:17:undelivered",
      "job:9:1700000000000",
      "job:9:1700000000000:media",
      "job:9:1700000000000:n1",
      "job:9:1700000000000:inline2",
      // A reply whose message id happens to end in letters and digits is still a reply.
      "whatsapp:1555:wamid.HBgLn0",
      "slack:D1:1700000000.000100",
    ];
    const insert = old.query(
      "INSERT INTO outbox (reply_key, part, channel, chat_id, kind, payload, state, created_at, updated_at) VALUES (?1, 0, 'telegram', '42', 'text', '{}', 'sent', 1, 1)",
    );
    for (const key of keys) insert.run(key);
    old.close();

    const db = openDatabase(dbPath);
    open.push(db);
    const purposes = Object.fromEntries(
      (db.query("SELECT reply_key, purpose FROM outbox").all() as Array<{ reply_key: string; purpose: string }>).map((r) => [r.reply_key, r.purpose]),
    );
    expect(purposes).toEqual({
      "telegram:42:17": "reply",
      "telegram:42:17:n0": "notice",
      "telegram:42:17:n12": "notice",
      "telegram:42:17:undelivered": "undelivered_notice",
      "telegram:42:17:n0:undelivered": "undelivered_notice",
      "telegram:42:17:inline3": "inline_fallback",
      "bg:4:telegram:17": "background",
      "bg:4:telegram:17:media": "media",
      "bg:4:telegram:17:undelivered": "undelivered_notice",
      "job:9:1700000000000": "job",
      "job:9:1700000000000:media": "media",
      "job:9:1700000000000:n1": "notice",
      "job:9:1700000000000:inline2": "inline_fallback",
      "whatsapp:1555:wamid.HBgLn0": "reply",
      "slack:D1:1700000000.000100": "reply",
    });
  });

  test("a part's first failure is kept across later ones; a replacement that did not go is forgotten", () => {
    const db = openDatabase(dbPath);
    open.push(db);
    let now = 1_000;
    const outbox = new Outbox(db, () => now);
    const [part] = outbox.record("r1", "telegram", TARGET, [text("held")]);
    expect(part!.firstFailedAt).toBeNull();
    outbox.defer(part!.id, "HTTP 500", 2_000);
    now = 5_000;
    outbox.defer(part!.id, "HTTP 500", 9_000);
    expect(outbox.parts("r1")[0]).toMatchObject({ firstFailedAt: 1_000, attempts: 2, notBefore: 9_000, state: "pending" });

    const [instead] = outbox.record("r1:instead0", "telegram", TARGET, [text("in its place")], { firstPart: 0, purpose: "undelivered_notice" });
    outbox.markSending(instead!.id);
    expect(outbox.forget("r1:instead0")).toBe(1);
    expect(outbox.parts("r1:instead0")).toEqual([]);
    // Forgotten, it can be recorded again from part 0.
    expect(outbox.record("r1:instead0", "telegram", TARGET, [text("in its place")], { firstPart: 0 })).toHaveLength(1);
  });
});
