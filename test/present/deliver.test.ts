/**
 * The non-streamed send path: parts in order, the plain-text fallback on a
 * formatting rejection (once, logged as an error), attachments after the
 * reply — as files, or as plain text where the port takes no media.
 */
import { describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import { deliverReply } from "../../src/present/deliver.ts";
import { FakeClock } from "../helpers/clock.ts";
import { RecordingPort, recordingLogger } from "./fakes.ts";

const bigFence = `\`\`\`rust\n${Array.from({ length: 400 }, (_, i) => `let x${i} = ${i};`).join("\n")}\n\`\`\``;

describe("deliverReply", () => {
  test("sends the parts, then the oversized code block as a file", async () => {
    const port = new RecordingPort(new FakeClock());
    await deliverReply(port, profileOf("telegram").text, `Intro **text**.\n\n${bigFence}\n\nOutro.`);
    expect(port.calls.map((c) => c.op)).toEqual(["send", "media"]);
    expect(port.calls[0]).toMatchObject({ notify: true, linkPreview: false, plain: false });
    expect(port.calls[1]).toMatchObject({ filename: "snippet.rs", notify: false });
    expect(port.calls[1]!.text!.split("\n")).toHaveLength(400);
  });

  test("a formatting rejection is resent once as plain text and logged as an error", async () => {
    const port = new RecordingPort(new FakeClock());
    port.rejectFormatting = () => true;
    const { logger, lines } = recordingLogger();
    await deliverReply(port, profileOf("slack").text, "Some *emphasis* and a [link](https://e.com).", { logger });
    expect(port.sends()).toEqual([expect.objectContaining({ text: "Some emphasis and a link: https://e.com.", plain: true, notify: true })]);
    expect(lines.filter((l) => l.includes("level=error") && l.includes("plain text"))).toHaveLength(1);
  });

  test("a port without media gets the code block as plain text messages within the limit", async () => {
    const port = new RecordingPort(new FakeClock(), { media: false });
    await deliverReply(port, profileOf("discord").text, `Look:\n\n${bigFence}`);
    const sends = port.sends();
    expect(sends.length).toBeGreaterThan(2);
    for (const s of sends) expect(s.text!.length).toBeLessThanOrEqual(2000);
    expect(sends.slice(1).every((s) => s.plain && !s.notify)).toBe(true);
    expect(
      sends
        .slice(1)
        .map((s) => s.text)
        .join("\n"),
    ).toContain("let x399 = 399;");
  });
});
