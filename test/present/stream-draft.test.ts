/**
 * Draft streaming against a recording reply port and a fake clock: every
 * rule of the draft mode, one test each.
 */
import { describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import { Telemetry, type TelemetryEvent } from "../../src/kernel/telemetry.ts";
import { createStreamer, type Streamer } from "../../src/present/stream.ts";
import { EDIT_EVERY_MS, SEAL_AT } from "../../src/present/stream-draft.ts";
import { FakeClock } from "../helpers/clock.ts";
import { RecordingPort, recordingLogger, telegramVisible } from "./fakes.ts";

function setup(capabilities: ConstructorParameters<typeof RecordingPort>[1] = {}, maxParts?: number) {
  const clock = new FakeClock();
  const port = new RecordingPort(clock, capabilities);
  const telemetry = new Telemetry();
  const phases: string[] = [];
  telemetry.on("channel.stream", (e: TelemetryEvent<"channel.stream">) => {
    phases.push(e.metadata.phase);
    expect(e.metadata.session_id).toBe("s1");
    expect(e.metadata.channel).toBe("telegram");
  });
  const { logger, lines } = recordingLogger();
  const streamer = createStreamer({
    mode: "draft",
    port,
    clock,
    telemetry,
    logger,
    channel: "telegram",
    platform: profileOf("telegram").text,
    sessionId: "s1",
    ...(maxParts !== undefined ? { maxParts } : {}),
  });
  return { clock, port, streamer, phases, lines };
}

/** Stream `text` in chunks, `stepMs` apart, then let the next scheduled edit happen. */
async function stream(streamer: Streamer, clock: FakeClock, text: string, { chunk = 20, stepMs = 50, itemId = "i1", settle = true } = {}) {
  for (let i = 0; i < text.length; i += chunk) {
    await streamer.push({ type: "text_delta", itemId, delta: text.slice(i, i + chunk) });
    await clock.advance(stepMs);
  }
  if (settle) await clock.advance(EDIT_EVERY_MS);
  await streamer.idle();
}

const para = (n: number, words = 40) => `${Array.from({ length: words }, (_, i) => (i % 9 === 8 ? `word${n}.` : `word${n}`)).join(" ")} End of paragraph.`;

describe("draft mode", () => {
  test("opens only after 30 characters, notifying once, link previews off", async () => {
    const { clock, port, streamer, phases } = setup();
    const almost = "Not quite thirty characters!!";
    expect(almost.length).toBe(29);
    await stream(streamer, clock, almost, { chunk: 7 });
    expect(port.sends()).toHaveLength(0);
    await stream(streamer, clock, "!", { chunk: 20 });
    expect(port.sends()).toHaveLength(1);
    expect(port.sends()[0]).toMatchObject({ notify: true, linkPreview: false });
    expect(phases[0]).toBe("open");
  });

  test("edits the live message about once a second, never faster", async () => {
    const { clock, port, streamer, phases } = setup();
    const text = Array.from({ length: 60 }, (_, i) => `token${i}`).join(" ");
    await stream(streamer, clock, text, { chunk: 8, stepMs: 100 });
    const edits = port.edits();
    const elapsed = clock.now();
    expect(edits.length).toBeGreaterThanOrEqual(Math.floor(elapsed / EDIT_EVERY_MS) - 2);
    expect(edits.length).toBeLessThanOrEqual(Math.ceil(elapsed / EDIT_EVERY_MS) + 1);
    const times = [port.sends()[0]!.at, ...edits.map((e) => e.at)];
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(EDIT_EVERY_MS);
    expect(phases.filter((p) => p === "edit").length).toBe(edits.length);
    await streamer.finish(text);
    expect(telegramVisible(port.visible().join(""))).toBe(text);
  });

  test("seals near 1,400 rendered characters at a heading and continues in a fresh, silent message", async () => {
    const { clock, port, streamer, phases } = setup();
    const doc = `## One\n\n${para(1)}\n\n${para(2)}\n\n${para(3)}\n\n## Two\n\n${para(4)}\n\n${para(5)}\n\n${para(6)}\n\n## Three\n\n${para(7)}`;
    await stream(streamer, clock, doc, { chunk: 25, stepMs: 60 });
    const sends = port.sends();
    expect(sends.length).toBeGreaterThanOrEqual(2);
    const first = port.messages.get(sends[0]!.id)!.text;
    const visible = telegramVisible(first);
    expect(visible.length).toBeLessThanOrEqual(SEAL_AT);
    expect(visible.length).toBeGreaterThan(SEAL_AT / 4);
    // The seal fell at a heading: the first card ends before "Two", the second begins with it.
    expect(visible.trim().endsWith("End of paragraph.")).toBe(true);
    expect(telegramVisible(port.messages.get(sends[1]!.id)!.text).startsWith("Two")).toBe(true);
    expect(sends[1]!.notify).toBe(false);
    expect(phases).toContain("seal");
    expect(phases).toContain("rotate");
    // Sealed cards are final: no edit after the seal.
    const sealedAt = port.edits(sends[0]!.id).at(-1)!.at;
    expect(port.calls.filter((c) => c.id === sends[0]!.id && c.at > sealedAt)).toHaveLength(0);
    await streamer.finish(doc);
    expect(telegramVisible(port.visible().join("\n\n")).replace(/\s+/g, " ")).toBe(telegramVisible(doc.replace(/## /g, "")).replace(/\s+/g, " "));
  });

  test("without a heading, seals at a paragraph", async () => {
    const { clock, port, streamer } = setup();
    const doc = [1, 2, 3, 4, 5, 6].map((n) => para(n)).join("\n\n");
    await stream(streamer, clock, doc, { chunk: 30, stepMs: 60 });
    const first = telegramVisible(port.messages.get(port.sends()[0]!.id)!.text);
    expect(first.length).toBeGreaterThan(SEAL_AT / 2);
    expect(first.length).toBeLessThanOrEqual(SEAL_AT);
    expect(first.endsWith("End of paragraph.")).toBe(true);
  });

  test("a short final remainder merges into the live card", async () => {
    const { clock, port, streamer } = setup();
    const text = "The answer is coming along nicely, one token at a time.";
    await stream(streamer, clock, text);
    const before = port.sends().length;
    await streamer.finish(`${text} Done!`);
    expect(port.sends()).toHaveLength(before);
    expect(port.visible()).toEqual([`${text} Done!`]);
  });

  test("a final reply that does not extend what was sealed is delivered in full", async () => {
    const { clock, port, streamer } = setup();
    const doc = [1, 2, 3, 4, 5, 6, 7].map((n) => para(n)).join("\n\n");
    await stream(streamer, clock, doc, { chunk: 40, stepMs: 60 });
    expect(port.sends().length).toBeGreaterThanOrEqual(2);
    const sealed = port.sends()[0]!.id;
    const final = "A different, shorter answer replaced the draft.";
    await streamer.finish(final);
    expect(port.messages.get(sealed)!.deleted).toBe(false);
    expect(port.visible().at(-1)).toBe(final);
    expect(port.visible().filter((t) => t === final)).toHaveLength(1);
  });

  test("/stop mid-draft deletes only the live unsealed card", async () => {
    const { clock, port, streamer, phases } = setup();
    const doc = [1, 2, 3, 4, 5, 6, 7].map((n) => para(n)).join("\n\n");
    await stream(streamer, clock, doc, { chunk: 40, stepMs: 60 });
    const [sealed, live] = port.sends().map((s) => s.id);
    expect(live).toBeDefined();
    await streamer.stop();
    expect(port.messages.get(sealed!)!.deleted).toBe(false);
    expect(port.messages.get(live!)!.deleted).toBe(true);
    expect(port.deletes()).toHaveLength(1);
    expect(phases.at(-1)).toBe("discard");
    const count = port.calls.length;
    await streamer.push({ type: "text_delta", itemId: "i1", delta: "more text after stop, long enough to open" });
    await clock.advance(5000);
    await streamer.finish("ignored");
    expect(port.calls).toHaveLength(count);
  });

  test("/stop while the model reasons deletes the 💭 message and the live card; sealed cards stay", async () => {
    const { clock, port, streamer } = setup();
    const think = async (itemId: string) => {
      for (let i = 0; i < 10; i++) {
        await streamer.push({ type: "reasoning_delta", itemId, delta: `thinking step ${i}. ` });
        await clock.advance(150);
      }
      await streamer.idle();
    };
    await think("r1");
    const doc = [1, 2, 3, 4, 5, 6, 7].map((n) => para(n)).join("\n\n");
    await stream(streamer, clock, doc, { chunk: 40, stepMs: 60 });
    // More reasoning after the answer landed: a new 💭 message, beside the live card.
    await think("r2");
    const statuses = port.sends().filter((s) => s.text!.startsWith("💭"));
    const [sealed, live] = port
      .sends()
      .filter((s) => !s.text!.startsWith("💭"))
      .map((s) => s.id);
    expect(statuses).toHaveLength(2);
    const status = statuses[1]!.id;
    expect(live).toBeDefined();
    expect(port.messages.get(status)!.deleted).toBe(false);
    expect(port.messages.get(live!)!.deleted).toBe(false);

    await streamer.stop();
    expect(port.messages.get(status)!.deleted).toBe(true);
    expect(port.messages.get(live!)!.deleted).toBe(true);
    expect(port.messages.get(sealed!)!.deleted).toBe(false);
    expect(port.visible()).toEqual([port.messages.get(sealed!)!.text]);
    // Nothing more after the stop: no status for later reasoning, no edit.
    const count = port.calls.length;
    await streamer.push({ type: "reasoning_delta", itemId: "r3", delta: "still thinking after the stop" });
    await clock.advance(5000);
    expect(port.calls).toHaveLength(count);
  });

  test("reasoning rolls into one 💭 message, edited in place and deleted when the answer lands", async () => {
    const { clock, port, streamer } = setup();
    for (let i = 0; i < 30; i++) {
      await streamer.push({ type: "reasoning_delta", itemId: "r1", delta: `thinking step ${i}. ` });
      await clock.advance(150);
    }
    await streamer.idle();
    const status = port.sends();
    expect(status).toHaveLength(1);
    expect(status[0]!.text!.startsWith("💭")).toBe(true);
    expect(status[0]!.notify).toBe(false);
    expect(port.edits(status[0]!.id).length).toBeGreaterThanOrEqual(2);
    await stream(streamer, clock, "Here is the answer, which is long enough to open the card.");
    expect(port.messages.get(status[0]!.id)!.deleted).toBe(true);
    const answer = port.sends()[1]!;
    expect(answer.notify).toBe(true);
    await streamer.finish("Here is the answer, which is long enough to open the card.");
    expect(port.visible()).toEqual(["Here is the answer, which is long enough to open the card."]);
  });

  test("no 💭 message on a channel that cannot delete", async () => {
    const { clock, port, streamer } = setup({ delete: false });
    await streamer.push({ type: "reasoning_delta", itemId: "r1", delta: "thinking hard about it" });
    await clock.advance(3000);
    await streamer.finish("Answer.");
    expect(port.sends().map((s) => s.text)).toEqual(["Answer."]);
  });

  test("a formatting rejection is resent once as plain text and logged as an error", async () => {
    const { clock, port, streamer, lines } = setup();
    port.rejectFormatting = (text) => text.includes("<b>");
    await stream(streamer, clock, "Some **bold** words that are long enough to open.");
    await streamer.finish("Some **bold** words that are long enough to open.");
    expect(port.sends()[0]!.plain).toBe(true);
    expect(port.visible()).toEqual(["Some bold words that are long enough to open."]);
    expect(lines.some((l) => l.includes("level=error"))).toBe(true);
  });

  test("a final reply with nothing streamed is sent whole, split when long", async () => {
    const { port, streamer } = setup();
    const long = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => para(n, 80)).join("\n\n");
    await streamer.finish(long);
    const sends = port.sends();
    expect(sends.length).toBeGreaterThan(1);
    expect(sends.map((s) => s.notify)).toEqual(sends.map((_, i) => i === 0));
    for (const s of sends) expect(telegramVisible(s.text!).length).toBeLessThanOrEqual(4096);
  });

  describe("over max_reply_parts", () => {
    const doc = Array.from({ length: 30 }, (_, n) => para(n + 1)).join("\n\n");
    /** The answer messages on screen (the "saying so" line apart), and the files sent. */
    const shown = (port: RecordingPort) => {
      const onScreen = port
        .sends()
        .map((s) => port.messages.get(s.id)!)
        .filter((m) => !m.deleted)
        .map((m) => telegramVisible(m.text));
      const files = port.calls.filter((c) => c.op === "media");
      return { texts: onScreen.filter((t) => !t.includes("answer.md")), files, note: onScreen.filter((t) => t.includes("answer.md")) };
    };

    /** At most the cap (3) of the answer's start on screen, one line saying so, and the whole answer once as answer.md. */
    const expectCappedToFile = (port: RecordingPort) => {
      const { texts, files, note } = shown(port);
      expect(texts.length).toBeGreaterThanOrEqual(1);
      expect(texts.length).toBeLessThanOrEqual(3);
      expect(doc.startsWith(texts.join("\n\n").trimEnd())).toBe(true);
      expect(note).toHaveLength(1);
      expect(files).toHaveLength(1);
      expect(files[0]).toMatchObject({ filename: "answer.md", text: doc });
    };

    test("streamed: the cards stop at the cap, a line says so, and the whole answer follows once as answer.md", async () => {
      const { clock, port, streamer } = setup({}, 3);
      await stream(streamer, clock, doc, { chunk: 40, stepMs: 60 });
      await streamer.finish(doc);
      const { texts, files, note } = shown(port);
      expect(texts.length).toBeGreaterThanOrEqual(1);
      expect(texts.length).toBeLessThanOrEqual(3);
      // What stays on screen is the start of the answer, in order: its first part(s).
      expect(doc.startsWith(texts.join("\n\n").trimEnd())).toBe(true);
      expect(texts.join("\n\n")).not.toContain("word30");
      expect(note).toHaveLength(1);
      expect(files).toHaveLength(1);
      expect(files[0]).toMatchObject({ filename: "answer.md", text: doc });
      // Nothing is sent after the file.
      expect(port.calls.at(-1)!.op).toBe("media");
    });

    test("an answer that lands between two edits is capped too: not one message per part", async () => {
      const { clock, port, streamer } = setup({}, 3);
      // The card opens, then the rest of a long answer arrives before the next edit is due.
      await stream(streamer, clock, doc.slice(0, 60), { settle: false });
      expect(port.sends()).toHaveLength(1);
      await streamer.finish(doc);
      expect(port.sends().length).toBeLessThanOrEqual(4);
      expectCappedToFile(port);
    });

    test("a final reply with nothing streamed is capped the same way", async () => {
      const { port, streamer } = setup({}, 3);
      await streamer.finish(doc);
      expectCappedToFile(port);
    });

    test("a reply within the cap is not turned into a file", async () => {
      const { clock, port, streamer } = setup({}, 12);
      await stream(streamer, clock, doc, { chunk: 40, stepMs: 60 });
      await streamer.finish(doc);
      expect(port.calls.filter((c) => c.op === "media")).toEqual([]);
      expect(port.visible().join(" ")).toContain("word30");
    });
  });
});
