/** Confirmation codes on an injected clock: who may answer, where, until when, and how often. */
import { describe, expect, test } from "bun:test";
import { type Answerer, buttonData, Confirmations, normalizeToken, parseButtonData } from "../../src/gateway/confirm.ts";

const OWNER = "1001";
const ORIGIN = { channel: "telegram" as const, senderId: OWNER, conversation: "telegram:1001:" };
const here: Answerer = { ...ORIGIN, role: "operator", direct: true };

function setup(ttlMs = 300_000) {
  let now = 1_700_000_000_000;
  const codes = new Confirmations({ ttlMs, now: () => now });
  let applied = 0;
  const propose = () => codes.propose(ORIGIN, "read-write access to /srv/data", () => `applied ${++applied}`);
  return { codes, propose, applied: () => applied, advance: (ms: number) => (now += ms) };
}

describe("a proposal", () => {
  test("its proposer confirms it once, in the same conversation, within its life", () => {
    const { codes, propose, applied } = setup();
    const token = propose();
    expect(token).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
    expect(codes.confirm(token, here)).toEqual({ ok: true, done: true, text: "applied 1", kind: "proposal" });
    const again = codes.confirm(token, here);
    expect(again.ok).toBe(false);
    expect(again.text).toContain("already used");
    expect(applied()).toBe(1);
  });

  test("another user, another owner, another conversation: refused, and the code is not used up", () => {
    const { codes, propose, applied } = setup();
    const token = propose();
    const friend = codes.confirm(token, { ...here, senderId: "2002", role: "user" });
    expect(friend.text).toContain("not yours");
    const otherOwner = codes.confirm(token, { ...here, senderId: "3003", role: "operator" });
    expect(otherOwner.text).toContain("not yours");
    const elsewhere = codes.confirm(token, { ...here, conversation: "telegram:-100200:", direct: false });
    expect(elsewhere.text).toContain("another conversation");
    // Even from the owner's DM: a proposal is bound to where it was made.
    expect(codes.confirm(token, { ...here, conversation: "telegram:999:", direct: true }).ok).toBe(false);
    // The command line is not the proposer's conversation either.
    expect(codes.confirm(token, { channel: "cli", senderId: "root", role: "operator", conversation: "cli:local:", direct: true }).ok).toBe(false);
    expect(applied()).toBe(0);
    expect(codes.confirm(token, here).ok).toBe(true);
    expect(applied()).toBe(1);
  });

  test("after its life it is refused as expired, not as unknown", () => {
    const { codes, propose, applied, advance } = setup(300_000);
    const token = propose();
    advance(300_001);
    const late = codes.confirm(token, here);
    expect(late.ok).toBe(false);
    expect(late.text).toContain("expired");
    expect(late.text).toContain("5 minutes");
    expect(applied()).toBe(0);
  });

  test("an unknown code says so; case and dashes do not matter", () => {
    const { codes, propose } = setup();
    expect(codes.confirm("NOPE2345", here).text).toContain("don't know");
    const token = propose();
    expect(normalizeToken(`${token.slice(0, 4).toLowerCase()}-${token.slice(4)}`)).toBe(token);
    expect(codes.confirm(` ${token.toLowerCase()} `, here).ok).toBe(true);
  });

  test("deny drops it; it cannot be confirmed afterwards", () => {
    const { codes, propose, applied } = setup();
    const token = propose();
    expect(codes.deny(token, here).text).toContain("Dropped");
    expect(codes.confirm(token, here).text).toContain("already used");
    expect(applied()).toBe(0);
  });
});

describe("an access request", () => {
  const open = (codes: Confirmations, ttlMs = 60_000) => codes.openAccess(ORIGIN, "read-only access to /srv/data", ttlMs, () => "Approved.");

  test("answered from its conversation, the owner's direct chat on that channel, or the command line", async () => {
    const { codes } = setup();
    const fromChat = open(codes);
    expect(codes.confirm(fromChat.token, here).ok).toBe(true);
    expect(await fromChat.decided).toBe("confirmed");

    const origin = { ...ORIGIN, conversation: "telegram:-100200:" };
    const group = codes.openAccess(origin, "x", 60_000, () => "Approved.");
    expect(codes.confirm(group.token, { ...here, conversation: "telegram:-100999:", direct: false }).ok).toBe(false);
    expect(codes.confirm(group.token, { ...here, channel: "slack", conversation: "slack:D1:", direct: true }).ok).toBe(false);
    expect(codes.confirm(group.token, { ...here, conversation: "telegram:1001:", direct: true }).ok).toBe(true);
    expect(await group.decided).toBe("confirmed");

    const local = open(codes);
    expect(codes.confirm(local.token, { channel: "cli", senderId: "root", role: "operator", conversation: "cli:local:", direct: true }).ok).toBe(true);
    expect(await local.decided).toBe("confirmed");
  });

  test("denied, timed out, or withdrawn when the turn stops", async () => {
    const { codes } = setup();
    const denied = open(codes);
    expect(codes.deny(denied.token, here).text).toContain("Denied");
    expect(await denied.decided).toBe("denied");

    const slow = open(codes, 30);
    expect(await slow.decided).toBe("expired");
    expect(codes.confirm(slow.token, here).text).toContain("expired");

    const stopped = open(codes);
    stopped.withdraw();
    expect(codes.confirm(stopped.token, here).text).toContain("stopped");
  });

  test("the pending list shows each person what they may answer from where they are", () => {
    const { codes, propose } = setup();
    const request = open(codes);
    const proposal = propose();
    expect(codes.pendingFor(here).map((c) => c.token)).toEqual([request.token, proposal]);
    expect(codes.pendingFor({ ...here, conversation: "telegram:-100:", direct: false })).toEqual([]);
    expect(codes.pendingFor({ channel: "cli", senderId: "me", role: "operator", conversation: "cli:local:", direct: true }).map((c) => c.token)).toEqual([request.token]);
    expect(codes.pendingFor({ ...here, senderId: "2002", role: "user" })).toEqual([]);
  });
});

test("button data carries the decision and the code, and nothing else parses", () => {
  expect(parseButtonData(buttonData("confirm", "ABCD2345"))).toEqual({ decision: "confirm", token: "ABCD2345" });
  expect(parseButtonData(buttonData("deny", "ABCD2345"))).toEqual({ decision: "deny", token: "ABCD2345" });
  expect(buttonData("confirm", "ABCD2345").length).toBeLessThanOrEqual(64);
  for (const junk of ["", "fx:ok:", "fx:maybe:ABCD2345", "ok:ABCD2345", "fx:ok:abcd2345", "fx:ok:ABCD2345 "]) expect(parseButtonData(junk)).toBeNull();
});
