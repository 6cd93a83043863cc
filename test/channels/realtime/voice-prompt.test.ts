/** A voice session's instructions, and the recap of the latest voice conversation that the owner's text turns get. */
import { describe, expect, test } from "bun:test";
import type { TurnRequest } from "../../../src/agent/agent.ts";
import { earlierLines, rowsFor, voiceInstructions, voiceRecap } from "../../../src/channels/realtime/voice-prompt.ts";
import type { HistoryMessage } from "../../../src/store/conversations.ts";

const HISTORY: HistoryMessage[] = [
  { id: 1, role: "user", text: "What time is the ferry?", sender: { id: "alice", trusted: true } },
  { id: 2, role: "assistant", text: "At ten past four." },
  { id: 3, role: "user", text: "Remind me at four.", sender: { id: "alice", trusted: true } },
  { id: 4, role: "assistant", text: "I will." },
];
const NOW = Date.parse("2026-07-01T16:00:00Z");

const request = (over: { role?: "operator" | "user"; shared?: boolean; conversation?: string }): TurnRequest =>
  ({
    conversation: over.conversation ?? "telegram:1:",
    channel: "telegram",
    text: "what did I ask you by voice?",
    images: [],
    tools: [],
    toolContext: { role: over.role ?? "operator", channel: "telegram", senderId: "1" },
    signal: AbortSignal.abort(),
    ...(over.shared !== undefined ? { shared: over.shared } : {}),
  }) as unknown as TurnRequest;

const recap = (lastAt: number | null) =>
  voiceRecap({
    conversation: () => "realtime:alice:",
    conversations: { latest: () => HISTORY, lastActivity: () => lastAt },
    now: () => NOW,
  });

describe("the voice conversation so far", () => {
  test("is told newest last, within its budget, the oldest lines dropped first", () => {
    expect(earlierLines(HISTORY)).toBe("Owner: What time is the ferry?\nYou: At ten past four.\nOwner: Remind me at four.\nYou: I will.");
    expect(earlierLines(HISTORY, 40)).toBe("Owner: Remind me at four.\nYou: I will.");
  });

  test("a session's instructions: SOUL.md, the sections, how to speak, the conversation so far, the owner's extra words", () => {
    const text = voiceInstructions({
      soul: "# Soul\n\nYou are Fermix.",
      now: new Date(NOW),
      sections: [{ title: "What you remember (relevant to this message)", body: "- The ferry leaves from pier 3" }],
      history: HISTORY,
      extra: "Answer in French.",
    });
    expect(text).toStartWith("# Soul\n\nYou are Fermix.");
    expect(text).toContain("- Channel: realtime voice (spoken, live).");
    expect(text).toContain("comes from someone other than your owner");
    expect(text.indexOf("## What you remember")).toBeLessThan(text.indexOf("## Speaking"));
    expect(text).toContain("## Earlier in this voice conversation\nOwner: What time is the ferry?");
    expect(text).toEndWith("## More from your owner for voice sessions\nAnswer in French.");
  });
});

describe("the recap in the owner's text turns", () => {
  test("the owner's direct turns get the end of a voice conversation of the last day", () => {
    const [section] = recap(NOW - 3600_000)(request({}));
    expect(section!.title).toBe("Your latest voice conversation with your owner (last words at 2026-07-01T15:00:00.000Z)");
    expect(section!.body).toContain("Owner: Remind me at four.");
  });

  test("nothing for others, for the owner in a shared chat, in the voice conversation itself, or after a day", () => {
    expect(recap(NOW)(request({ role: "user" }))).toEqual([]);
    expect(recap(NOW)(request({ shared: true }))).toEqual([]);
    expect(recap(NOW)(request({ conversation: "realtime:alice:" }))).toEqual([]);
    expect(recap(NOW - 25 * 3600_000)(request({}))).toEqual([]);
    expect(recap(null)(request({}))).toEqual([]);
  });
});

test("the tail rowsFor(chars) reads gives the same lines as the whole history, even of empty messages", () => {
  for (const chars of [40, 1200, 2000]) {
    const many = Array.from({ length: 2000 }, (_, i) => ({ id: i, role: i % 2 === 0 ? "user" : "assistant", text: i % 3 === 0 ? "" : `said ${i}` }) as const);
    expect(earlierLines(many.slice(-rowsFor(chars)), chars)).toBe(earlierLines(many, chars));
  }
});
