/**
 * Generated documents streamed through draft and block modes: every message
 * ever sent or edited is within the platform's limit and its grammar, and
 * what stays on screen at the end (plus attachments) holds all the content.
 */
import { describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import type { ChannelName } from "../../src/config/schema.ts";
import { createStreamer } from "../../src/present/stream.ts";
import { BLOCK_MAX } from "../../src/present/stream-block.ts";
import { FakeClock } from "../helpers/clock.ts";
import { RecordingPort } from "./fakes.ts";
import { generate } from "./gen.ts";
import { missingAtom, platformLength, skeleton, slackProblems, telegramProblems, visibleText } from "./oracle.ts";

const SEEDS = 40;

async function run(mode: "draft" | "block", channel: ChannelName, seed: number) {
  const doc = generate(seed);
  const clock = new FakeClock();
  const port = new RecordingPort(clock, { edit: mode === "draft" });
  const streamer = createStreamer({ mode, port, clock, channel, platform: profileOf(channel).text, sessionId: `seed-${seed}` });
  let at = 0;
  const step = 7 + (seed % 40);
  while (at < doc.markdown.length) {
    await streamer.push({ type: "text_delta", itemId: "answer", delta: doc.markdown.slice(at, at + step) });
    at += step;
    await clock.advance(seed % 3 === 0 ? 400 : 60);
  }
  await streamer.push({ type: "message_done", itemId: "answer", text: doc.markdown });
  await streamer.finish(doc.markdown);
  return { doc, port };
}

describe("streaming generated documents", () => {
  for (const [mode, channel] of [
    ["draft", "telegram"],
    ["draft", "discord"],
    ["block", "slack"],
    ["block", "telegram"],
    ["block", "whatsapp"],
  ] as const) {
    test(`${mode} on ${channel}: ${SEEDS} documents`, async () => {
      const dialect = profileOf(channel).text.dialect.name;
      const failures: string[] = [];
      for (let seed = 1; seed <= SEEDS && failures.length < 3; seed++) {
        const { doc, port } = await run(mode, channel, seed);
        for (const call of port.calls) {
          if (call.op !== "send" && call.op !== "edit") continue;
          const text = call.text!;
          const length = call.plain ? text.length : platformLength(dialect, text);
          const fence = doc.fences.some((f) => skeleton(visibleText(dialect, text)).includes(skeleton(f.code)));
          const cap = mode === "block" && !fence && !text.startsWith("💭") ? BLOCK_MAX : profileOf(channel).text.limit;
          if (length > cap) failures.push(`seed ${seed}: ${call.op} of ${length} > ${cap}`);
          if (dialect === "telegram" && !call.plain && telegramProblems(text).length > 0) failures.push(`seed ${seed}: ${telegramProblems(text)[0]}`);
          if (dialect === "slack" && slackProblems(text).length > 0) failures.push(`seed ${seed}: ${slackProblems(text)[0]}`);
        }
        const notifying = port.sends().filter((s) => s.notify);
        if (notifying.length !== 1) failures.push(`seed ${seed}: ${notifying.length} notifying messages`);
        const screen = port
          .visible()
          .map((t) => visibleText(dialect, t))
          .join("\n");
        const files = port.calls
          .filter((c) => c.op === "media")
          .map((c) => c.text)
          .join("\n");
        const attached = new Set(port.calls.filter((c) => c.op === "media").map((c) => c.text));
        const atoms = doc.atoms.filter((a) => !doc.fences.some((f) => attached.has(f.code) && f.atoms.includes(a)));
        const missing = missingAtom(screen, atoms);
        if (missing) failures.push(`seed ${seed}: missing ${missing}`);
        for (const fence of doc.fences.filter((f) => attached.has(f.code))) {
          if (!files.includes(fence.code)) failures.push(`seed ${seed}: attachment lost`);
        }
      }
      expect(failures).toEqual([]);
    }, 60_000);
  }
});
