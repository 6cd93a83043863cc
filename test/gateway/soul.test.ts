/** `/soul` through the gateway: parsing, the role gate, and how a proposal's diff reaches a chat. */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { parseSoulArgs, spell, tokenRefusal } from "../../src/gateway/commands/soul.ts";
import { reply } from "../fakes/model-server.ts";
import { rng } from "../helpers/fuzz.ts";
import { type Harness, startHarness, TELEGRAM_FRIEND } from "../helpers/gateway.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("parsing /soul", () => {
  test("each subcommand and its argument", () => {
    expect(parseSoulArgs("")).toEqual({ kind: "status" });
    expect(parseSoulArgs(" History ")).toEqual({ kind: "history" });
    expect(parseSoulArgs("reset")).toEqual({ kind: "reset" });
    expect(parseSoulArgs("review")).toEqual({ kind: "review", instruction: "", withContext: false });
    expect(parseSoulArgs("review be warmer,\nless formal")).toEqual({ kind: "review", instruction: "be warmer,\nless formal", withContext: false });
    expect(parseSoulArgs("review --with-context")).toEqual({ kind: "review", instruction: "", withContext: true });
    expect(parseSoulArgs("review shorter --with-context please")).toEqual({ kind: "review", instruction: "shorter please", withContext: true });
    // A phone's autocorrect turns "--" into a dash.
    expect(parseSoulArgs("review —with-context")).toEqual({ kind: "review", instruction: "", withContext: true });
    expect(parseSoulArgs("diff k7m2q9xd")).toEqual({ kind: "diff", token: "k7m2q9xd" });
    expect(parseSoulArgs("APPLY K7M2Q9XD")).toEqual({ kind: "apply", token: "K7M2Q9XD" });
    expect(parseSoulArgs("revert 3")).toEqual({ kind: "revert", revision: 3 });
    expect(parseSoulArgs("revert #12")).toEqual({ kind: "revert", revision: 12 });
  });

  test("a missing or malformed argument, or an unknown subcommand, is a usage reply naming the problem", () => {
    for (const [args, problem] of [
      ["apply", "needs the token"],
      ["diff a b", "needs the token"],
      ["revert", "needs a revision number"],
      ["revert two", "needs a revision number"],
      ["revert 0", "needs a revision number"],
      ["history please", "takes nothing after it"],
      ["rewrite", "not a /soul subcommand"],
    ] as const) {
      const parsed = parseSoulArgs(args);
      expect(parsed.kind).toBe("usage");
      expect(parsed.kind === "usage" && parsed.problem).toContain(problem);
    }
  });

  test("fuzzed arguments from a chat never throw, and always come out as one of the requests", () => {
    const words = ["review", "diff", "apply", "history", "revert", "reset", "--with-context", "—with-context", "#3", "0", "-1", "1e9", "\n", "`tok`"];
    for (let seed = 1; seed <= 2000; seed++) {
      const r = rng(seed);
      const args = Array.from({ length: r.int(0, 5) }, () => (r.next() < 0.6 ? r.pick(words) : r.string(r.int(0, 12)))).join(r.pick([" ", "  ", "\n", "\t"]));
      const parsed = parseSoulArgs(args);
      expect(["status", "history", "reset", "review", "diff", "apply", "revert", "usage"]).toContain(parsed.kind);
      if (parsed.kind === "revert") expect(Number.isSafeInteger(parsed.revision) && parsed.revision >= 1).toBe(true);
      if (parsed.kind === "review") expect(parsed.instruction.split(/\s+/).filter((w) => /^(--|—|–)with-context$/i.test(w))).toEqual([]);
    }
  });

  test("durations and refusals in plain words", () => {
    expect(spell(300_000)).toBe("5 minutes");
    expect(spell(60_000)).toBe("1 minute");
    expect(spell(2_000)).toBe("2 seconds");
    expect(tokenRefusal("expired", 300_000)).toContain("expired (tokens last 5 minutes)");
    expect(tokenRefusal("used", 1)).toContain("already been applied");
    expect(tokenRefusal("other_sender", 1)).toContain("someone else's");
    expect(tokenRefusal("other_conversation", 1)).toContain("another conversation");
    expect(tokenRefusal("unknown", 1)).toContain("no /soul proposal with that token");
  });
});

describe("/soul in a chat", () => {
  test("an allowed user who is not the owner is refused, and nothing is asked of the model", async () => {
    h = await startHarness();
    await h.ingest({ senderId: TELEGRAM_FRIEND, text: "/soul review be ruder" });
    expect(h.telegram.texts().at(-1)).toContain("needs the owner");
    expect(h.fake.requests).toHaveLength(0);
  });

  test("a diff too long for a message arrives as a file, the apply line in the message", async () => {
    h = await startHarness();
    const lines = Array.from({ length: 400 }, (_, i) => `- Rule ${i + 1}: keep answers short and kind, and say so when unsure.`);
    writeFileSync(h.core.loaded.paths.soul, `# Soul\n\n${lines.join("\n")}\n`);
    h.fake.reply(reply.text(`# Soul\n\n${lines.map((l) => l.replace("short", "brief")).join("\n")}\n`));
    await h.ingest({ text: "/soul review use brief" });
    // The diff is too big for a chat message: the presenter sends it as a file and says so where it stood.
    const [text, file, ...rest] = h.telegram.visible();
    expect(rest).toEqual([]);
    expect(text?.kind === "text" && text.text).toContain("snippet.diff");
    expect(text?.kind === "text" && text.text).toMatch(/400 lines added, 400 removed[\s\S]*\/soul apply [a-z2-9]{8}/);
    expect(file?.kind === "media" && file.media.filename).toBe("snippet.diff");
    const diff = readFileSync(file?.kind === "media" ? file.media.path : "", "utf8");
    expect(diff).toStartWith("--- SOUL.md (revision 2)\n+++ SOUL.md (proposed)\n@@ ");
    for (const n of [1, 200, 400]) expect(diff).toContain(`+- Rule ${n}: keep answers brief`);
  });
});
