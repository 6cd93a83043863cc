/**
 * Block streaming, the off mode and mode resolution, against a recording
 * reply port and a fake clock.
 */
import { describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import { Telemetry } from "../../src/kernel/telemetry.ts";
import { createStreamer, resolveStreamingMode, type Streamer, turnStreamingMode } from "../../src/present/stream.ts";
import { BLOCK_MAX, BLOCK_MIN, IDLE_FLUSH_MS } from "../../src/present/stream-block.ts";
import { FakeClock } from "../helpers/clock.ts";
import { RecordingPort } from "./fakes.ts";

function setup(capabilities: ConstructorParameters<typeof RecordingPort>[1] = {}, channel: "discord" | "telegram" = "discord") {
  const clock = new FakeClock();
  const port = new RecordingPort(clock, { edit: false, ...capabilities });
  const telemetry = new Telemetry();
  const phases: string[] = [];
  telemetry.on("channel.stream", (e) => void phases.push(e.metadata.phase));
  const streamer = createStreamer({ mode: "block", port, clock, telemetry, channel, platform: profileOf(channel).text, sessionId: "s2" });
  return { clock, port, streamer, phases };
}

async function stream(streamer: Streamer, clock: FakeClock, text: string, { chunk = 15, stepMs = 40, itemId = "i1" } = {}) {
  for (let i = 0; i < text.length; i += chunk) {
    await streamer.push({ type: "text_delta", itemId, delta: text.slice(i, i + chunk) });
    await clock.advance(stepMs);
  }
  await streamer.idle();
}

const sentence = (n: number) => `Sentence number ${n} explains one more detail of the answer.`;
const paragraph = (from: number, count: number) => Array.from({ length: count }, (_, i) => sentence(from + i)).join(" ");

describe("block mode", () => {
  test("each finished output item is its own message; only the first notifies", async () => {
    const { clock, port, streamer, phases } = setup();
    await stream(streamer, clock, "First item.", { itemId: "a" });
    await streamer.push({ type: "message_done", itemId: "a", text: "First item." });
    await stream(streamer, clock, "Second item.", { itemId: "b" });
    await streamer.push({ type: "message_done", itemId: "b", text: "Second item." });
    await streamer.finish("Second item.");
    expect(port.sends().map((s) => [s.text, s.notify, s.linkPreview])).toEqual([
      ["First item.", true, false],
      ["Second item.", false, false],
    ]);
    expect(phases).toEqual(["block", "block"]);
  });

  test("commentary before a tool call is its own message", async () => {
    const { clock, port, streamer } = setup();
    await stream(streamer, clock, "Let me look that up", { itemId: "a" });
    expect(port.sends()).toHaveLength(0);
    await streamer.push({ type: "tool_call", callId: "c1", name: "search", arguments: "{}" });
    expect(port.sends().map((s) => s.text)).toEqual(["Let me look that up"]);
    await stream(streamer, clock, "Found it.", { itemId: "b" });
    await streamer.push({ type: "message_done", itemId: "b", text: "Found it." });
    await streamer.finish("Found it.");
    expect(port.sends().map((s) => s.text)).toEqual(["Let me look that up", "Found it."]);
  });

  test("text before a code fence too big for a block goes out while the fence is still streaming; the fence is one block of its own", async () => {
    const { clock, port, streamer } = setup({}, "telegram");
    const intro = "Here is the script you asked for:\n\n";
    const fence = `\`\`\`python\n${Array.from({ length: 80 }, (_, i) => `print("line ${i} of the script")`).join("\n")}\n\`\`\`\n`;
    await stream(streamer, clock, intro + fence.slice(0, fence.length - 6));
    // The fence has not closed, and the model has not finished: the intro is on screen already, alone.
    expect(port.sends().map((s) => s.text)).toEqual(["Here is the script you asked for:"]);
    await stream(streamer, clock, `${fence.slice(fence.length - 6)}\nThat is all.`);
    await streamer.push({ type: "message_done", itemId: "i1", text: `${intro}${fence}\nThat is all.` });
    await streamer.finish(`${intro}${fence}\nThat is all.`);
    const texts = port.sends().map((s) => s.text);
    expect(texts[0]).toBe("Here is the script you asked for:");
    // The fence is whole in one message (never cut), longer than a block; the closing line follows.
    const code = texts.find((t) => t?.includes("line 0 of the script"))!;
    expect(code).toContain("line 79 of the script");
    expect(code.length).toBeGreaterThan(BLOCK_MAX);
    expect(texts.join("\n")).toContain("That is all.");
  });

  test("past max_reply_parts nothing more streams: the whole answer follows as answer.md, saying so", async () => {
    const clock = new FakeClock();
    const port = new RecordingPort(clock, { edit: false });
    const streamer = createStreamer({ mode: "block", port, clock, channel: "discord", platform: profileOf("discord").text, sessionId: "cap", maxParts: 3 });
    const answer = Array.from({ length: 12 }, (_, p) => paragraph(p * 20, 20)).join("\n\n");
    await stream(streamer, clock, answer, { chunk: 200 });
    await streamer.push({ type: "message_done", itemId: "i1", text: answer });
    await streamer.finish(answer);
    const blocks = port.sends().filter((s) => s.text?.includes("Sentence number"));
    expect(blocks).toHaveLength(3);
    expect(port.sends().at(-1)!.text).toContain("answer.md");
    const file = port.calls.filter((c) => c.op === "media");
    expect(file.map((c) => c.filename)).toEqual(["answer.md"]);
    expect(file[0]!.text).toBe(answer);
  });

  test("overflow is cut on the ladder into blocks of 800–1,200 characters, none longer", async () => {
    const { clock, port, streamer } = setup();
    const text = [paragraph(1, 9), paragraph(10, 14), paragraph(30, 25), paragraph(60, 6)].join("\n\n");
    await stream(streamer, clock, text, { chunk: 12, stepMs: 10 });
    const during = port.sends().map((s) => s.text!);
    expect(during.length).toBeGreaterThanOrEqual(2);
    for (const block of during) {
      expect(block.length).toBeGreaterThanOrEqual(BLOCK_MIN);
      expect(block.length).toBeLessThanOrEqual(BLOCK_MAX);
      // Never mid-sentence.
      expect(block.trimEnd().endsWith(".")).toBe(true);
    }
    await streamer.push({ type: "message_done", itemId: "i1", text });
    await streamer.finish(text);
    for (const s of port.sends()) expect(s.text!.length).toBeLessThanOrEqual(BLOCK_MAX);
    expect(
      port
        .sends()
        .map((s) => s.text)
        .join(" ")
        .replace(/\s+/g, " "),
    ).toBe(text.replace(/\s+/g, " "));
  });

  test("a second of silence flushes what is settled, and nothing mid-sentence", async () => {
    const { clock, port, streamer } = setup();
    await stream(streamer, clock, "The first sentence is done. The second is still being wri");
    await clock.advance(IDLE_FLUSH_MS);
    await streamer.idle();
    expect(port.sends().map((s) => s.text)).toEqual(["The first sentence is done."]);
    await stream(streamer, clock, "tten out.");
    await clock.advance(IDLE_FLUSH_MS - 100);
    expect(port.sends()).toHaveLength(1);
    await clock.advance(100);
    await streamer.idle();
    expect(port.sends().map((s) => s.text)).toEqual(["The first sentence is done.", "The second is still being written out."]);
  });

  test("silence never cuts an open code fence or a growing table", async () => {
    const { clock, port, streamer } = setup();
    await stream(streamer, clock, "Intro line.\n\n```py\nprint(1)\n");
    await clock.advance(IDLE_FLUSH_MS);
    await streamer.idle();
    expect(port.sends().map((s) => s.text)).toEqual(["Intro line."]);
    await stream(streamer, clock, "print(2)\n```\n\n| a | b |\n");
    await clock.advance(IDLE_FLUSH_MS);
    await streamer.idle();
    expect(port.sends().map((s) => s.text)).toEqual(["Intro line.", "```py\nprint(1)\nprint(2)\n```"]);
    await stream(streamer, clock, "|---|---|\n| 1 | 2 |");
    await streamer.push({ type: "message_done", itemId: "i1", text: "Intro line.\n\n```py\nprint(1)\nprint(2)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |" });
    expect(port.sends().at(-1)!.text).toBe("```\n| a   | b   |\n| --- | --- |\n| 1   | 2   |\n```");
  });

  test("reasoning arrives as silent 💭 messages, deleted when the answer lands", async () => {
    const { clock, port, streamer, phases } = setup();
    await streamer.push({ type: "reasoning_delta", itemId: "r1", delta: "Considering the options." });
    await clock.advance(IDLE_FLUSH_MS);
    await streamer.idle();
    await streamer.push({ type: "reasoning_delta", itemId: "r2", delta: "Checking one more thing." });
    await stream(streamer, clock, "The answer.", { itemId: "a" });
    const thoughts = port.sends().filter((s) => s.text!.startsWith("💭"));
    expect(thoughts).toHaveLength(2);
    for (const t of thoughts) expect(t.notify).toBe(false);
    await streamer.push({ type: "message_done", itemId: "a", text: "The answer." });
    await streamer.finish("The answer.");
    for (const t of thoughts) expect(port.messages.get(t.id)!.deleted).toBe(true);
    expect(port.visible()).toEqual(["The answer."]);
    expect(port.sends().find((s) => s.text === "The answer.")!.notify).toBe(true);
    expect(phases.filter((p) => p === "discard")).toHaveLength(2);
  });

  test("no 💭 messages at all on a channel that cannot delete", async () => {
    const { clock, port, streamer } = setup({ delete: false });
    await streamer.push({ type: "reasoning_delta", itemId: "r1", delta: "Considering the options." });
    await clock.advance(IDLE_FLUSH_MS);
    await stream(streamer, clock, "The answer.", { itemId: "a" });
    await streamer.finish("The answer.");
    expect(port.sends().map((s) => s.text)).toEqual(["The answer."]);
  });

  test("/stop deletes the 💭 messages and sends nothing more", async () => {
    const { clock, port, streamer } = setup();
    await streamer.push({ type: "reasoning_delta", itemId: "r1", delta: "Thinking." });
    await clock.advance(IDLE_FLUSH_MS);
    await stream(streamer, clock, "Partial answer that was never", { itemId: "a" });
    await streamer.stop();
    await clock.advance(5 * IDLE_FLUSH_MS);
    await streamer.finish("Partial answer that was never finished.");
    expect(port.visible()).toEqual([]);
  });

  test("a final reply that was never streamed is delivered; one that was is not repeated", async () => {
    const quiet = setup();
    await quiet.streamer.finish("Nothing streamed, all at the end.");
    expect(quiet.port.sends().map((s) => [s.text, s.notify])).toEqual([["Nothing streamed, all at the end.", true]]);
    const { clock, port, streamer } = setup();
    await stream(streamer, clock, "Streamed answer.");
    await streamer.finish("Streamed answer. With a tail the deltas missed.");
    expect(port.visible().join(" ")).toBe("Streamed answer. With a tail the deltas missed.");
  });
});

describe("off mode", () => {
  test("events are ignored; the final reply is split, rendered and sent once, code too big goes as a file", async () => {
    const clock = new FakeClock();
    const port = new RecordingPort(clock);
    const streamer = createStreamer({ mode: "off", port, clock, channel: "telegram", platform: profileOf("telegram").text, sessionId: "s3" });
    await streamer.push({ type: "text_delta", itemId: "a", delta: "ignored while streaming is off ".repeat(5) });
    await clock.advance(10_000);
    expect(port.calls).toHaveLength(0);
    const code = Array.from({ length: 300 }, (_, i) => `print(${i})  # a line of python code`).join("\n");
    await streamer.finish(`# Title\n\nText.\n\n\`\`\`python\n${code}\n\`\`\`\n\nAfter.`);
    const sends = port.sends();
    expect(sends[0]!.notify).toBe(true);
    expect(sends[0]!.text).toContain("snippet.py");
    const media = port.calls.filter((c) => c.op === "media");
    expect(media).toMatchObject([{ filename: "snippet.py", notify: false, text: code }]);
    expect(port.calls.at(-1)!.op).toBe("media");
  });
});

describe("streaming mode", () => {
  test("an explicit key wins; unset derives from editing; draft without editing does not stream", () => {
    expect(resolveStreamingMode("block", { edit: true })).toEqual({ mode: "block", mismatch: false });
    expect(resolveStreamingMode("off", { edit: true })).toEqual({ mode: "off", mismatch: false });
    expect(resolveStreamingMode(undefined, { edit: true })).toEqual({ mode: "draft", mismatch: false });
    expect(resolveStreamingMode(undefined, { edit: false })).toEqual({ mode: "block", mismatch: false });
    expect(resolveStreamingMode("draft", { edit: false })).toEqual({ mode: "off", mismatch: true });
    expect(resolveStreamingMode("draft", { edit: true })).toEqual({ mode: "draft", mismatch: false });
  });

  test("only real channel turns stream, and only with a provider that streams", () => {
    expect(turnStreamingMode("draft", "channel", true)).toBe("draft");
    expect(turnStreamingMode("block", "channel", false)).toBe("off");
    for (const origin of ["background", "scheduled", "local"] as const) expect(turnStreamingMode("draft", origin, true)).toBe("off");
  });
});
