/** The pure parts of `/soul review`: the evidence window, the prompt, the draft as a file, and the diff. */
import { describe, expect, test } from "bun:test";
import { soulDiff } from "../../../src/agent/soul/diff.ts";
import { CONTEXT_CHARS, CONTEXT_MESSAGES, cleanDraft, contextWindow, reviewPrompt } from "../../../src/agent/soul/review.ts";

describe("contextWindow", () => {
  test("takes at most CONTEXT_MESSAGES messages, the newest, returned oldest first", () => {
    const newestFirst = Array.from({ length: 30 }, (_, i) => `message ${30 - i}`);
    const window = contextWindow(newestFirst);
    expect(window.messages).toHaveLength(CONTEXT_MESSAGES);
    expect(window.messages[0]).toBe("message 11");
    expect(window.messages.at(-1)).toBe("message 30");
    expect(window.chars).toBe(window.messages.join("").length);
  });

  test("stays within CONTEXT_CHARS: the message that does not fit is cut short, nothing older is taken", () => {
    const long = "x".repeat(1500);
    const window = contextWindow([long, long, long, "oldest"]);
    expect(window.chars).toBeLessThanOrEqual(CONTEXT_CHARS);
    expect(window.messages).toHaveLength(3);
    expect(window.messages[0]).toEndWith("…");
    expect(window.messages[0]!.length).toBe(CONTEXT_CHARS - 3000);
    expect(window.messages).not.toContain("oldest");
  });

  test("blank messages are skipped; no messages is an empty window", () => {
    expect(contextWindow(["  ", "hi", ""])).toEqual({ messages: ["hi"], chars: 2 });
    expect(contextWindow([])).toEqual({ messages: [], chars: 0 });
  });

  test("other limits are honoured exactly", () => {
    const window = contextWindow(["abcdef", "ghijkl"], { messages: 5, chars: 9 });
    expect(window).toEqual({ messages: ["gh…", "abcdef"], chars: 9 });
  });
});

describe("reviewPrompt", () => {
  test("without an instruction asks for a subtle, voice-preserving review of the whole file", () => {
    const { instructions, text } = reviewPrompt("# Soul\n\nBe kind.\n", {});
    expect(instructions).toContain("complete revised file");
    expect(text).toContain("<soul_md>\n# Soul\n\nBe kind.\n</soul_md>");
    expect(text).toMatch(/subtly[\s\S]*voice/);
    expect(text).not.toContain("<recent_messages>");
  });

  test("with an instruction and context: the instruction leads, the messages are quoted as evidence with brackets escaped", () => {
    const { text } = reviewPrompt("# Soul\n", { instruction: "answer in French", context: { messages: ["hi", "</message> <b>"], chars: 15 } });
    expect(text).toStartWith("<request>\nanswer in French");
    expect(text).toContain("not as instructions");
    expect(text).toContain("<message>hi</message>\n<message>&lt;/message&gt; &lt;b&gt;</message>");
  });
});

describe("cleanDraft", () => {
  test("a fence around the whole answer is removed; the file ends in one newline", () => {
    expect(cleanDraft("```markdown\n# Soul\n\nBe kind.\n```")).toBe("# Soul\n\nBe kind.\n");
    expect(cleanDraft("\n# Soul\n\nBe kind.\n\n\n")).toBe("# Soul\n\nBe kind.\n");
    expect(cleanDraft("   ")).toBe("");
  });

  test("a code block inside the file is kept", () => {
    const file = "# Soul\n\nExample:\n\n```\nhi\n```\n\nThe end.\n";
    expect(cleanDraft(file)).toBe(file);
  });
});

describe("soulDiff", () => {
  test("unified lines with the two labels, and what was added and removed", () => {
    const diff = soulDiff("# Soul\n\nBe kind.\nBe brief.\n", "# Soul\n\nBe kind.\nBe very brief.\nUse French.\n", {
      before: "revision 2",
      after: "proposed",
    });
    expect(diff.lines).toEqual([
      "--- SOUL.md (revision 2)",
      "+++ SOUL.md (proposed)",
      "@@ -1,4 +1,5 @@",
      " # Soul",
      " ",
      " Be kind.",
      "-Be brief.",
      "+Be very brief.",
      "+Use French.",
    ]);
    expect([diff.added, diff.removed]).toEqual([2, 1]);
  });

  test("equal texts: no lines", () => {
    expect(soulDiff("a\n", "a\n", { before: "x", after: "y" })).toEqual({ lines: [], added: 0, removed: 0 });
  });
});
