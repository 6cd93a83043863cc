/**
 * Confirmation codes on an injected clock, kept in a real SQLite file: who
 * may answer, where, until when, and how often — and all of it still so
 * after the database is reopened, as a restart would, or when another
 * process answers.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import { type Answerer, buttonData, type CodeRecord, Confirmations, normalizeToken, parseButtonData, processAlive } from "../../src/gateway/confirm.ts";
import { ConfirmationStore } from "../../src/store/confirmations.ts";
import { openDatabase } from "../../src/store/db.ts";
import { IdempotencyStore } from "../../src/store/idempotency.ts";
import { Inbox } from "../../src/store/inbox.ts";
import { Outbox } from "../../src/store/outbox.ts";
import { sweep } from "../../src/store/retention.ts";

const OWNER = "1001";
const ORIGIN = { channel: "telegram" as const, senderId: OWNER, conversation: "telegram:1001:" };
const here: Answerer = { ...ORIGIN, role: "operator", direct: true };
const cli: Answerer = { channel: "cli", senderId: "root", role: "operator", conversation: "cli:local:", direct: true };

type Change = { kind: "grant"; path: string; mode: "ro" | "rw" } | { kind: "env-set"; name: string; value: string };
const RW_GRANT: Change = { kind: "grant", path: "/srv/data", mode: "rw" };

let root: string;
const open: Database[] = [];
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-confirm-"));
});
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  rmSync(root, { recursive: true, force: true });
});

/**
 * Codes over one database file. `process(holder)` is a process using it (its
 * own connection); `restart()` closes every connection and starts a new
 * process, whose predecessors are no longer running.
 */
function setup(ttlMs = 300_000) {
  let now = 1_700_000_000_000;
  const applied: Array<CodeRecord<Change>> = [];
  const running = new Set<string>();
  const path = join(root, "fermix.db");
  const process = (holder: string) => {
    const db = openDatabase(path);
    open.push(db);
    running.add(holder);
    const store = new ConfirmationStore(db);
    const codes = new Confirmations<Change>({
      store,
      ttlMs,
      now: () => now,
      holder,
      alive: (h) => running.has(h),
      pollMs: 5,
      local: (channel) => profileOf(channel).local,
      apply: (code) => {
        if (code.grants.kind === "grant" && code.grants.path === "/gone") throw new Error("Not granted: /gone no longer exists.");
        applied.push(code);
        return `applied ${applied.length}`;
      },
    });
    return { codes, store, db };
  };
  let current = process("first");
  return {
    get codes() {
      return current.codes;
    },
    get store() {
      return current.store;
    },
    process,
    restart(holder = "after-restart") {
      for (const db of open.splice(0)) db.close();
      running.clear();
      current = process(holder);
    },
    propose: (change: Change = RW_GRANT) => current.codes.propose(ORIGIN, "read-write access to /srv/data", change),
    applied: () => applied.length,
    appliedCodes: applied,
    advance: (ms: number) => (now += ms),
    now: () => now,
  };
}

describe("a proposal", () => {
  test("its proposer confirms it once, in the same conversation, within its life — after a restart too", () => {
    const s = setup();
    const token = s.propose();
    expect(token).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
    s.restart();
    expect(s.codes.confirm(token, here)).toEqual({ ok: true, done: true, text: "applied 1", kind: "proposal" });
    expect(s.appliedCodes[0]).toMatchObject({ token, kind: "proposal", channel: "telegram", senderId: OWNER, grants: RW_GRANT });
    s.restart("third");
    const again = s.codes.confirm(token, here);
    expect(again.ok).toBe(false);
    expect(again.text).toContain("already used (approved)");
    expect(s.applied()).toBe(1);
  });

  test("another user, another owner, another conversation: refused, and the code is not used up", () => {
    const s = setup();
    const token = s.propose();
    s.restart();
    const friend = s.codes.confirm(token, { ...here, senderId: "2002", role: "user" });
    expect(friend).toMatchObject({ ok: false, done: false });
    expect(friend.text).toContain("not yours");
    const otherOwner = s.codes.confirm(token, { ...here, senderId: "3003", role: "operator" });
    expect(otherOwner.text).toContain("not yours");
    const elsewhere = s.codes.confirm(token, { ...here, conversation: "telegram:-100200:", direct: false });
    expect(elsewhere.text).toContain("another conversation");
    // Even from the owner's DM: a proposal is bound to where it was made.
    expect(s.codes.confirm(token, { ...here, conversation: "telegram:999:", direct: true }).ok).toBe(false);
    // The command line is not the proposer's conversation either.
    expect(s.codes.confirm(token, cli).ok).toBe(false);
    expect(s.applied()).toBe(0);
    s.restart("third");
    expect(s.codes.confirm(token, here).ok).toBe(true);
    expect(s.applied()).toBe(1);
  });

  test("after its life it is refused as expired, not as unknown, restart or not", () => {
    const s = setup(300_000);
    const token = s.propose();
    s.advance(300_001);
    s.restart();
    const late = s.codes.confirm(token, here);
    expect(late).toMatchObject({ ok: false, done: true, kind: "proposal" });
    expect(late.text).toContain("expired");
    expect(late.text).toContain("5 minutes");
    s.restart("third");
    expect(s.codes.confirm(token, here).text).toContain("expired");
    expect(s.applied()).toBe(0);
  });

  test("an unknown code says so; case and dashes do not matter", () => {
    const s = setup();
    expect(s.codes.confirm("NOPE2345", here).text).toContain("don't know");
    expect(s.codes.confirm("", here).text).toContain("(none given)");
    const token = s.propose();
    expect(normalizeToken(`${token.slice(0, 4).toLowerCase()}-${token.slice(4)}`)).toBe(token);
    expect(s.codes.confirm(` ${token.toLowerCase()} `, here).ok).toBe(true);
  });

  test("deny drops it; it cannot be confirmed afterwards, after a restart neither", () => {
    const s = setup();
    const token = s.propose();
    expect(s.codes.deny(token, here).text).toContain("Dropped");
    s.restart();
    expect(s.codes.confirm(token, here).text).toContain("already used (denied)");
    expect(s.applied()).toBe(0);
  });

  test("a change no longer possible is refused when confirmed, and the code is used up", () => {
    const s = setup();
    const token = s.propose({ kind: "grant", path: "/gone", mode: "ro" });
    expect(s.codes.confirm(token, here)).toMatchObject({ ok: false, done: true, text: "Not granted: /gone no longer exists." });
    expect(s.codes.confirm(token, here).text).toContain("already used");
  });

  test("answered from two processes, one after the other: it applies once", () => {
    const s = setup();
    const token = s.propose();
    const other = s.process("second");
    const answers = [s.codes.confirm(token, here), other.codes.confirm(token, here)];
    expect(answers.map((a) => a.ok)).toEqual([true, false]);
    expect(answers[1]!.text).toContain("already used");
    expect(s.applied()).toBe(1);
  });

  test("remembered for an hour after it is decided, then forgotten and swept with the other old rows", () => {
    const s = setup();
    const used = s.propose();
    const left = s.propose();
    s.codes.confirm(used, here);
    s.advance(59 * 60_000);
    expect(s.codes.confirm(used, here).text).toContain("already used");
    expect(s.codes.confirm(left, here).text).toContain("expired");
    s.advance(2 * 60_000);
    expect(s.codes.confirm(used, here).text).toContain("don't know");
    const fresh = s.propose();
    const db = open.at(-1)!;
    const swept = sweep(
      {
        idempotency: new IdempotencyStore(db),
        outbox: new Outbox(db),
        inbox: new Inbox(db, new IdempotencyStore(db)),
        codes: s.store,
        spoolDir: join(root, "spool"),
        now: s.now,
      },
      { outboxDays: 7, inboxDays: 7 },
    );
    expect(swept.codes).toBe(1);
    expect(s.store.get(used)).toBeUndefined();
    // Expired 55 minutes ago: still recognised until its hour is up.
    expect(s.store.get(left)?.state).toBe("expired");
    expect(s.store.get(fresh)?.state).toBe("pending");
  });

  test("a value set under a secret-looking name is kept only while the code is pending", () => {
    const s = setup();
    const token = s.propose({ kind: "env-set", name: "API_TOKEN", value: "s3cr3t-value" });
    expect(s.store.get<Change>(token)?.grants).toEqual({ kind: "env-set", name: "API_TOKEN", value: "s3cr3t-value" });
    s.codes.deny(token, here);
    expect(s.store.get<Change>(token)?.grants).toEqual({ kind: "env-set", name: "API_TOKEN" } as unknown as Change);
  });
});

describe("an access request", () => {
  const ask = (codes: Confirmations<Change>, ttlMs = 60_000, origin = ORIGIN) =>
    codes.openAccess(origin, "read-only access to /srv/data", ttlMs, { kind: "grant", path: "/srv/data", mode: "ro" });

  test("answered from its conversation, the owner's direct chat on that channel, or the command line", async () => {
    const { codes, applied } = setup();
    const fromChat = ask(codes);
    expect(codes.confirm(fromChat.token, here)).toMatchObject({ ok: true, text: "applied 1", kind: "access" });
    expect(await fromChat.decided).toBe("confirmed");

    const group = ask(codes, 60_000, { ...ORIGIN, conversation: "telegram:-100200:" });
    expect(codes.confirm(group.token, { ...here, conversation: "telegram:-100999:", direct: false }).ok).toBe(false);
    expect(codes.confirm(group.token, { ...here, channel: "slack", conversation: "slack:D1:", direct: true }).ok).toBe(false);
    expect(codes.confirm(group.token, { ...here, conversation: "telegram:1001:", direct: true }).ok).toBe(true);
    expect(await group.decided).toBe("confirmed");

    const local = ask(codes);
    expect(codes.confirm(local.token, cli).ok).toBe(true);
    expect(await local.decided).toBe("confirmed");
    expect(applied()).toBe(3);
  });

  test("denied, timed out, or withdrawn when the turn stops", async () => {
    const { codes } = setup();
    const denied = ask(codes);
    expect(codes.deny(denied.token, here).text).toContain("Denied");
    expect(await denied.decided).toBe("denied");

    const slow = ask(codes, 30);
    expect(await slow.decided).toBe("expired");
    expect(codes.confirm(slow.token, here).text).toContain("expired");

    const stopped = ask(codes);
    stopped.withdraw();
    expect(codes.confirm(stopped.token, here).text).toContain("stopped");

    const shutDown = ask(codes);
    shutDown.withdraw("shutdown");
    expect(codes.confirm(shutDown.token, here).text).toBe("That request ended when the assistant restarted; ask again.");
  });

  test("the pending list shows each person what they may answer from where they are", () => {
    const s = setup();
    const request = ask(s.codes);
    const proposal = s.propose();
    expect(s.codes.pendingFor(here).map((c) => c.token)).toEqual([request.token, proposal]);
    expect(s.codes.pendingFor({ ...here, conversation: "telegram:-100:", direct: false })).toEqual([]);
    expect(s.codes.pendingFor({ ...cli, senderId: "me" }).map((c) => c.token)).toEqual([request.token]);
    expect(s.codes.pendingFor({ ...here, senderId: "2002", role: "user" })).toEqual([]);
    request.withdraw();
  });

  test("after a restart its turn is gone: the code is refused in plain words and grants nothing; a proposal beside it lives on", () => {
    const s = setup();
    const request = ask(s.codes);
    const proposal = s.propose();
    s.restart();
    expect(s.codes.pendingFor(here).map((c) => c.token)).toEqual([proposal]);
    const answer = s.codes.confirm(request.token, here);
    expect(answer).toEqual({ ok: false, done: true, text: "That request ended when the assistant restarted; ask again.", kind: "access" });
    expect(s.codes.confirm(request.token, cli).text).toContain("ended when the assistant restarted");
    expect(s.codes.deny(request.token, here).text).toContain("ended when the assistant restarted");
    expect(s.applied()).toBe(0);
    expect(s.codes.confirm(proposal, here).ok).toBe(true);
  });

  test("answered from another process while the turn that asked still waits: granted there, and the waiting turn hears of it", async () => {
    const s = setup();
    const request = ask(s.codes);
    const other = s.process("command-line");
    expect(other.codes.pendingFor(cli).map((c) => c.token)).toEqual([request.token]);
    expect(other.codes.confirm(request.token, cli)).toMatchObject({ ok: true, text: "applied 1" });
    expect(await request.decided).toBe("confirmed");
    expect(s.codes.confirm(request.token, here).text).toContain("already used");
  });

  test("denied from another process: the waiting turn is told no", async () => {
    const s = setup();
    const request = ask(s.codes);
    s.process("command-line").codes.deny(request.token, cli);
    expect(await request.decided).toBe("denied");
    expect(s.applied()).toBe(0);
  });
});

test("a process is alive while its pid answers, and never when the pid is our own", () => {
  expect(processAlive(`${process.pid}:earlier`)).toBe(false);
  expect(processAlive("0:x")).toBe(false);
  expect(processAlive("not-a-pid")).toBe(false);
  const child = Bun.spawnSync(["true"]);
  expect(processAlive(`${child.pid}:x`)).toBe(false);
  expect(processAlive(`${process.ppid}:x`)).toBe(true);
});

test("button data carries the decision and the code, and nothing else parses", () => {
  expect(parseButtonData(buttonData("confirm", "ABCD2345"))).toEqual({ decision: "confirm", token: "ABCD2345" });
  expect(parseButtonData(buttonData("deny", "ABCD2345"))).toEqual({ decision: "deny", token: "ABCD2345" });
  expect(buttonData("confirm", "ABCD2345").length).toBeLessThanOrEqual(64);
  for (const junk of ["", "fx:ok:", "fx:maybe:ABCD2345", "ok:ABCD2345", "fx:ok:abcd2345", "fx:ok:ABCD2345 "]) expect(parseButtonData(junk)).toBeNull();
});
