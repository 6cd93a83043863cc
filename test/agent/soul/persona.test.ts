/**
 * The persona service on a real SQLite file, a real SOUL.md and (for reviews)
 * a real provider against the fake model on loopback; time is an injected clock.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_SOUL } from "../../../src/agent/prompt.ts";
import { createProvider } from "../../../src/agent/providers/index.ts";
import { Persona, PersonaRefused, TokenRefused } from "../../../src/agent/soul/persona.ts";
import { DraftFailed } from "../../../src/agent/soul/review.ts";
import { ConversationStore } from "../../../src/store/conversations.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { SoulStore } from "../../../src/store/soul.ts";
import { type FakeModel, reply, startFakeModel, userText } from "../../fakes/model-server.ts";

const TTL = 300_000;
const OWNER = { channel: "telegram", senderId: "111", conversation: "telegram:111:" };
const EDITED = "# Soul\n\nYou are Fermix. Answer in one sentence.\n";

let root: string;
let workspace: string;
let db: Database;
let now: number;
let tokens: number;
let fake: FakeModel | null;
let conversations: ConversationStore;

const soulPath = () => join(workspace, "SOUL.md");

/** The service as the core builds it: constructed, then squared with the file before the first turn. */
function persona(options: { model?: boolean } = {}): Persona {
  const provider = fake ? createProvider("fake", { api: "responses", base_url: fake.url, model: "fake-model" } as never, { limits: { maxRetries: 0 } }) : null;
  const service = new Persona({
    store: new SoulStore(db),
    path: soulPath(),
    conversations,
    model: () => (options.model !== false && provider ? { provider, model: "fake-model" } : null),
    ttlMs: TTL,
    now: () => now,
    token: () => `tok${++tokens}`,
  });
  service.sync();
  return service;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-persona-"));
  workspace = join(root, "workspace");
  mkdirSync(workspace);
  db = openDatabase(join(root, "fermix.db"));
  conversations = new ConversationStore(db);
  now = 1_700_000_000_000;
  tokens = 0;
  fake = null;
});
afterEach(async () => {
  await fake?.stop();
  db.close();
  rmSync(root, { recursive: true, force: true });
});

/** A hand edit that is visibly a new version of the file even within the same millisecond. */
function editByHand(text: string) {
  writeFileSync(soulPath(), text);
  const later = new Date(Date.now() + 5000);
  utimesSync(soulPath(), later, later);
}

describe("the file and its history", () => {
  test("first run: SOUL.md is written with the default, owner-only, and recorded as revision 1", () => {
    const p = persona();
    expect(p.current()).toBe(DEFAULT_SOUL);
    expect(readFileSync(soulPath(), "utf8")).toBe(DEFAULT_SOUL);
    expect(statSync(soulPath()).mode & 0o777).toBe(0o600);
    expect(p.history().map((r) => [r.id, r.origin])).toEqual([[1, "initial"]]);
  });

  test("an existing SOUL.md is the initial revision as found", () => {
    editByHand(EDITED);
    const p = persona();
    expect(p.current()).toBe(EDITED);
    expect(p.history()).toEqual([expect.objectContaining({ id: 1, origin: "initial", note: null, bytes: EDITED.length })]);
  });

  test("a hand edit is noticed at the next read and recorded once as a manual edit; reading again records nothing", () => {
    const p = persona();
    p.current();
    editByHand(EDITED);
    expect(p.current()).toBe(EDITED);
    expect(p.current()).toBe(EDITED);
    expect(p.history().map((r) => [r.id, r.origin, r.note])).toEqual([
      [1, "initial", "the shipped default"],
      [2, "manual", "edited on disk"],
    ]);
    // A restart (a new service on the same store) finds the file as recorded: nothing new.
    expect(persona().history()).toHaveLength(2);
  });

  test("a deleted SOUL.md is written again with the default, and that is recorded", () => {
    const p = persona();
    editByHand(EDITED);
    p.current();
    rmSync(soulPath());
    expect(p.current()).toBe(DEFAULT_SOUL);
    expect(p.history().at(-1)).toEqual(expect.objectContaining({ origin: "manual", note: expect.stringContaining("missing") }));
  });
});

describe("proposals", () => {
  test("revert: proposed against the current revision, applied by its token; the file is replaced atomically", () => {
    const p = persona();
    p.current();
    editByHand(EDITED);
    const proposal = p.proposeRevert(OWNER, 1);
    expect(proposal).toEqual(expect.objectContaining({ kind: "revert", base: 2, before: EDITED, after: DEFAULT_SOUL, token: "tok1", expiresAt: now + TTL }));
    // Nothing changes before it is applied.
    expect(p.current()).toBe(EDITED);
    const { revision } = p.apply(OWNER, "tok1");
    expect(revision).toEqual(expect.objectContaining({ id: 3, origin: "revert", note: "revision 1", text: DEFAULT_SOUL }));
    expect(readFileSync(soulPath(), "utf8")).toBe(DEFAULT_SOUL);
    expect(statSync(soulPath()).mode & 0o777).toBe(0o600);
    expect(readdirSync(workspace)).toEqual(["SOUL.md"]);
    expect(p.current()).toBe(DEFAULT_SOUL);
    // The applied text is not mistaken for a hand edit.
    expect(p.history().map((r) => r.origin)).toEqual(["initial", "manual", "revert"]);
  });

  test("reset proposes the shipped default; refused when it already is", () => {
    const p = persona();
    expect(() => p.proposeReset(OWNER)).toThrow(PersonaRefused);
    editByHand(EDITED);
    p.apply(OWNER, p.proposeReset(OWNER).token);
    expect(p.current()).toBe(DEFAULT_SOUL);
    expect(p.history().at(-1)?.origin).toBe("reset");
  });

  test("revert to an unknown revision, or to the current text, is refused in words", () => {
    const p = persona();
    expect(() => p.proposeRevert(OWNER, 9)).toThrow("There is no revision 9");
    expect(() => p.proposeRevert(OWNER, 1)).toThrow("nothing to revert");
  });

  test("a token works once", () => {
    const p = persona();
    editByHand(EDITED);
    const { token } = p.proposeReset(OWNER);
    p.apply(OWNER, token);
    expect(() => p.apply(OWNER, token)).toThrow(new TokenRefused("used"));
    expect(() => p.pending(OWNER, token)).toThrow(new TokenRefused("used"));
  });

  test("a token expires after the TTL: refused, and nothing changes", () => {
    const p = persona();
    editByHand(EDITED);
    const { token } = p.proposeReset(OWNER);
    now += TTL - 1;
    expect(p.pending(OWNER, token).after).toBe(DEFAULT_SOUL);
    now += 1;
    expect(() => p.apply(OWNER, token)).toThrow(new TokenRefused("expired"));
    expect(p.current()).toBe(EDITED);
  });

  test("a token is good only for its maker, in its conversation; an unknown one is unknown", () => {
    const p = persona();
    editByHand(EDITED);
    const { token } = p.proposeReset(OWNER);
    expect(() => p.apply({ ...OWNER, senderId: "222" }, token)).toThrow(new TokenRefused("other_sender"));
    expect(() => p.apply({ ...OWNER, conversation: "telegram:-100:" }, token)).toThrow(new TokenRefused("other_conversation"));
    expect(() => p.apply(OWNER, "nope1234")).toThrow(new TokenRefused("unknown"));
    // None of the refusals used it up.
    expect(p.apply(OWNER, token.toUpperCase()).revision.origin).toBe("reset");
  });

  test("a proposal made before the file changed cannot be applied, and /soul diff says why", () => {
    const p = persona();
    editByHand(EDITED);
    const { token } = p.proposeReset(OWNER);
    editByHand(`${EDITED}Also: be kind.\n`);
    expect(p.pending(OWNER, token).staleSince).toBe(3);
    expect(() => p.apply(OWNER, token)).toThrow(/changed since that proposal was made/);
    expect(readFileSync(soulPath(), "utf8")).toContain("be kind");
  });
});

describe("review", () => {
  test("one request to the model, whose answer becomes the proposal; with context, at most the stated window", async () => {
    fake = await startFakeModel();
    fake.reply(reply.text("```markdown\n", EDITED, "```"), reply.text(EDITED.replace("one", "two")));
    const p = persona();
    for (let i = 1; i <= 25; i++) {
      conversations.append(OWNER.conversation, "user", `message number ${i}`, { id: OWNER.senderId, trusted: true });
      // In a group, another member's words in the same conversation are not the owner's evidence.
      conversations.append(OWNER.conversation, "user", `a friend's message ${i}`, { id: "222", trusted: false });
    }
    conversations.append(OWNER.conversation, "assistant", "an answer is not evidence");
    conversations.append("telegram:other:", "user", "another conversation", { id: OWNER.senderId, trusted: true });

    const plain = await p.proposeReview(OWNER);
    expect(plain.after).toBe(EDITED);
    expect(plain.context).toBeUndefined();
    expect(userText(fake.requests[0]!)).toContain("subtly");
    expect(userText(fake.requests[0]!)).not.toContain("message number");

    const guided = await p.proposeReview(OWNER, { instruction: "be briefer", withContext: true });
    expect(guided.note).toBe("be briefer");
    expect(guided.context).toEqual({ messages: 20, chars: expect.any(Number) });
    const sent = userText(fake.requests[1]!);
    expect(sent).toStartWith("<request>\nbe briefer");
    const quoted = [...sent.matchAll(/<message>([\s\S]*?)<\/message>/g)].map((m) => m[1]);
    expect(quoted).toEqual(Array.from({ length: 20 }, (_, i) => `message number ${i + 6}`));
    expect(sent).not.toContain("not evidence");
    expect(sent).not.toContain("a friend's message");
    expect(sent).not.toContain("another conversation");
  });

  test("an unchanged draft, a failing model or no model at all is refused; nothing is proposed", async () => {
    fake = await startFakeModel();
    fake.reply(reply.text(DEFAULT_SOUL), reply.status(401, "bad key"), reply.text("  "));
    const p = persona();
    await expect(p.proposeReview(OWNER)).rejects.toThrow(/no change/);
    await expect(p.proposeReview(OWNER)).rejects.toThrow(DraftFailed);
    await expect(p.proposeReview(OWNER)).rejects.toThrow("empty");
    await expect(persona({ model: false }).proposeReview(OWNER)).rejects.toThrow(/No model provider/);
  });
});
