/** The token rules of /soul proposals: pure, on data. */
import { describe, expect, test } from "bun:test";
import { checkToken, hashToken, newToken, normalizeToken, TOKEN_LENGTH, type TokenCheck } from "../../../src/agent/soul/tokens.ts";
import type { StoredProposal } from "../../../src/store/soul.ts";

const OWNER = { channel: "telegram", senderId: "111", conversation: "telegram:111:" };
const stored = (overrides: Partial<StoredProposal> = {}): StoredProposal => ({
  kind: "review",
  note: null,
  baseRevision: 1,
  text: "x",
  ...OWNER,
  createdAt: 0,
  expiresAt: 300_000,
  usedAt: null,
  ...overrides,
});

/** The verdict in one word: "ok" or why it was refused. */
const verdict = (check: TokenCheck) => (check.ok ? "ok" : check.reason);

describe("tokens", () => {
  test("are short, lower case, and free of look-alike characters", () => {
    for (let i = 0; i < 200; i++) expect(newToken()).toMatch(new RegExp(`^[a-hjkmnp-z2-9]{${TOKEN_LENGTH}}$`));
    expect(newToken(() => 0)).toBe("aaaaaaaa");
  });

  test("are compared as typed with stray case, spaces, backticks or quotes", () => {
    expect(normalizeToken("  `AbC23xyz` ")).toBe("abc23xyz");
    expect(hashToken("ABC23XYZ")).toBe(hashToken("'abc23xyz'"));
    expect(hashToken("abc23xyz")).not.toBe(hashToken("abc23xyy"));
    expect(hashToken("abc23xyz")).not.toContain("abc23xyz");
  });
});

describe("checkToken", () => {
  test("a pending proposal, for its maker, in its conversation, before expiry: accepted", () => {
    expect(checkToken(stored(), OWNER, 299_999)).toEqual({ ok: true, proposal: stored() });
  });

  test("no proposal: unknown", () => {
    expect(verdict(checkToken(null, OWNER, 0))).toBe("unknown");
  });

  test("another sender, or the same id on another channel: someone else's, whatever the token's state", () => {
    expect(verdict(checkToken(stored(), { ...OWNER, senderId: "222" }, 0))).toBe("other_sender");
    expect(verdict(checkToken(stored(), { ...OWNER, channel: "slack" }, 0))).toBe("other_sender");
    // Ownership comes first: a stranger does not learn that the token was used or has expired.
    expect(verdict(checkToken(stored({ usedAt: 5 }), { ...OWNER, senderId: "222" }, 10 ** 9))).toBe("other_sender");
  });

  test("the same sender in another conversation: refused as made elsewhere", () => {
    expect(verdict(checkToken(stored(), { ...OWNER, conversation: "telegram:-100:" }, 0))).toBe("other_conversation");
  });

  test("used once: refused as used, even before it would expire", () => {
    expect(verdict(checkToken(stored({ usedAt: 10 }), OWNER, 20))).toBe("used");
  });

  test("at or after its expiry: expired", () => {
    expect(verdict(checkToken(stored(), OWNER, 300_000))).toBe("expired");
    expect(verdict(checkToken(stored(), OWNER, 300_001))).toBe("expired");
  });
});
