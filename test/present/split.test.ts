/**
 * The boundary ladder rung by rung, fences and attachments, and what each
 * platform counts — on small hand-written documents, so a failure reads
 * plainly.
 */
import { describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import { telegramLength } from "../../src/channels/telegram/dialect.ts";
import { plainText, renderReply, snippetName } from "../../src/present/render.ts";
import { telegramVisible } from "./fakes.ts";
import { graphemeProblems, telegramProblems } from "./oracle.ts";

const words = (n: number, tag = "w") => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(" ");
const texts = (markdown: string, limit: number, channel: "signal" | "telegram" = "signal") =>
  renderReply(markdown, profileOf(channel).text, { limit }).parts.map((p) => p.text);

describe("the ladder", () => {
  test("a section heading is preferred to a later paragraph", () => {
    const doc = `${words(20, "a")}.\n\n## Next\n\n${words(20, "b")}.\n\n${words(20, "c")}.`;
    const parts = texts(doc, 170);
    expect(parts[0]).toBe(`${words(20, "a")}.`);
    expect(parts[1]!.startsWith("Next")).toBe(true);
  });

  test("a paragraph when there is no heading", () => {
    const doc = `${words(15, "a")}.\n\n${words(15, "b")}.\n\n${words(15, "c")}.`;
    expect(texts(doc, 130)).toEqual([`${words(15, "a")}.\n\n${words(15, "b")}.`, `${words(15, "c")}.`]);
  });

  test("a line, then a sentence end, then whitespace", () => {
    const lines = `${words(12, "a")}.\n${words(12, "b")}.\n${words(12, "c")}.`;
    expect(texts(lines, 60)[0]).toBe(`${words(12, "a")}.`);
    const sentences = `${words(12, "a")}. ${words(12, "b")}. ${words(12, "c")}.`;
    expect(texts(sentences, 60)[0]).toBe(`${words(12, "a")}.`);
    const oneSentence = `${words(40, "a")}.`;
    const parts = texts(oneSentence, 100);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(100);
    expect(parts.join(" ")).toBe(oneSentence);
  });

  test("a hard cut only without whitespace, and never inside a grapheme cluster", () => {
    const family = "👨‍👩‍👧‍👦";
    const flags = "🇯🇵🇺🇸";
    const doc = `${family}${flags}👍🏽e\u0301`.repeat(30);
    const parts = texts(doc, 50);
    expect(parts.join("")).toBe(doc);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(50);
      expect(graphemeProblems(p)).toEqual([]);
    }
  });

  test("CJK sentences end at full-width stops", () => {
    const doc = "这是第一句话。".repeat(10) + "这是第二句话。".repeat(10);
    const parts = texts(doc, 100);
    for (const p of parts) expect(p.endsWith("。")).toBe(true);
    expect(parts.join("")).toBe(doc);
  });

  test("a cut never leaves a Telegram tag open or an entity broken", () => {
    const doc = `**${words(30, "bold&")} <tag> ${words(30, "more")}** and [a link with ${words(20, "x")}](https://example.com/?a=1&b=2)`;
    const parts = texts(doc, 120, "telegram");
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) {
      expect(telegramProblems(p)).toEqual([]);
      expect(telegramLength(p)).toBeLessThanOrEqual(120);
    }
  });
});

describe("code fences", () => {
  const fence = (lines: number, lang = "py") => `\`\`\`${lang}\n${Array.from({ length: lines }, (_, i) => `print(${i})`).join("\n")}\n\`\`\``;

  test("a fence that fits is kept whole in the next message", () => {
    const doc = `${words(20, "a")}.\n\n${fence(10)}\n\nAfter.`;
    const parts = texts(doc, 200, "telegram");
    const withCode = parts.filter((p) => p.includes("print("));
    expect(withCode).toHaveLength(1);
    expect(withCode[0]).toContain("print(0)");
    expect(withCode[0]).toContain("print(9)");
  });

  test("a fence too large for any message goes as a file named from its language, after the reply", () => {
    const reply = renderReply(`Before.\n\n${fence(600, "typescript")}\n\nAfter.`, profileOf("telegram").text);
    expect(reply.attachments).toHaveLength(1);
    expect(reply.attachments[0]).toMatchObject({ filename: "snippet.ts", mime: "text/plain" });
    expect(reply.attachments[0]!.content.split("\n")).toHaveLength(600);
    expect(reply.parts.map((p) => telegramVisible(p.text)).join("\n")).toBe("Before.\n\n📎 snippet.ts (attached below)\n\nAfter.");
  });

  test("two big fences in one language get distinct names; unknown languages are .txt", () => {
    const reply = renderReply(`${fence(600)}\n\n${fence(600)}\n\n${fence(600, "")}`, profileOf("discord").text);
    expect(reply.attachments.map((a) => a.filename)).toEqual(["snippet.py", "snippet-2.py", "snippet.txt"]);
    expect(snippetName("Python")).toBe("snippet.py");
    expect(snippetName("no such language!")).toBe("snippet.txt");
  });
});

describe("length as each platform counts it", () => {
  test("Telegram counts text after entity parsing, in UTF-16 units", () => {
    expect(telegramLength("<b>ab</b>")).toBe(2);
    expect(telegramLength("a &amp; b &lt;")).toBe(7);
    expect(telegramLength('<a href="https://x.y/?a=1&amp;b=2">x</a>')).toBe(1);
    expect(telegramLength("👍🏽")).toBe(4);
  });

  test("the limits: Telegram 4096, Discord 2000, Slack 40,000, WhatsApp 4096, Signal 4096 for readability", () => {
    expect([...(["telegram", "discord", "slack", "whatsapp", "signal"] as const).map((c) => profileOf(c).text.limit)]).toEqual([
      4096, 2000, 40_000, 4096, 4096,
    ]);
  });

  test("Telegram splits on visible length: markup-heavy text fits where its HTML would not", () => {
    const doc = Array.from({ length: 400 }, (_, i) => `**b${i}** [l](https://example.com/${i})`).join(" ");
    const parts = renderReply(doc, profileOf("telegram").text).parts;
    expect(parts).toHaveLength(1);
    expect(parts[0]!.text.length).toBeGreaterThan(4096);
    expect(telegramLength(parts[0]!.text)).toBeLessThanOrEqual(4096);
  });

  test("every part carries notify (first only) and linkPreview false", () => {
    const parts = renderReply(Array.from({ length: 5 }, () => words(200)).join("\n\n"), profileOf("discord").text).parts;
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.map((p) => [p.notify, p.linkPreview, p.plain])).toEqual(parts.map((_, i) => [i === 0, false, false]));
  });
});

describe("dialect details", () => {
  test("Telegram: expandable blockquote past 4 lines or 300 characters", () => {
    const quote = (lines: string[]) => renderReply(lines.map((l) => `> ${l}`).join("\n"), profileOf("telegram").text).parts[0]!.text;
    expect(quote(["a", "b", "c", "d"])).toStartWith("<blockquote>");
    expect(quote(["a", "b", "c", "d", "e"])).toStartWith("<blockquote expandable>");
    expect(quote(["x".repeat(301)])).toStartWith("<blockquote expandable>");
    expect(quote(["x".repeat(300)])).toStartWith("<blockquote>");
  });

  test("Telegram: code is never inside bold or a link; unsupported links stay readable", () => {
    const html = renderReply("**see `x` now** [`y`](https://e.com) [rel](/docs)", profileOf("telegram").text).parts[0]!.text;
    expect(html).toBe('<b>see</b> <code>x</code> <b>now</b> <a href="https://e.com">y</a> rel (/docs)');
    expect(telegramProblems(html)).toEqual([]);
  });

  test("Slack: only <url|label> links and &amp; &lt; &gt; escapes", () => {
    const text = renderReply("A < B & C > D, **bold** and [link](https://e.com/?a|b)", profileOf("slack").text).parts[0]!.text;
    expect(text).toBe("A &lt; B &amp; C &gt; D, *bold* and <https://e.com/?a%7Cb|link>");
  });

  test("Slack and WhatsApp: a literal asterisk cannot open a style", () => {
    for (const channel of ["slack", "whatsapp"] as const) {
      const text = renderReply("\\*not bold\\*", profileOf(channel).text).parts[0]!.text;
      expect(text).toBe("\u200b*not bold*");
    }
  });

  test("WhatsApp and Signal: links read label: url", () => {
    expect(renderReply("[docs](https://e.com) and https://bare.example", profileOf("whatsapp").text).parts[0]!.text).toBe(
      "docs: https://e.com and https://bare.example",
    );
    expect(plainText("**[docs](https://e.com)** and `code`")).toBe("docs: https://e.com and code");
  });

  test("Signal: code verbatim and indented", () => {
    expect(renderReply("```\n  a < b\n```", profileOf("signal").text).parts[0]!.text).toBe("      a < b");
  });

  test("Discord: Markdown as written, tables as monospace", () => {
    const text = renderReply("## Title\n\n**b** _i_ ~~s~~ `c` [l](https://e.com) \\*lit\\*\n\n| a | b |\n|---|---|\n| 1 | 2 |", profileOf("discord").text)
      .parts[0]!.text;
    expect(text).toBe("## Title\n\n**b** _i_ ~~s~~ `c` [l](https://e.com) \\*lit\\*\n\n```\n| a   | b   |\n| --- | --- |\n| 1   | 2   |\n```");
  });
});
