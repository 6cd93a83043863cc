/** ProviderEvent → session/update, on data: what an editor is shown while a turn runs. */
import { describe, expect, test } from "bun:test";
import { AcpTurnStream, type SessionUpdate, toolTitle, UpdateChannel, UpdateMapper } from "../../../src/channels/acp/stream.ts";
import type { ProviderEvent } from "../../../src/message/stream.ts";

const texts = (updates: SessionUpdate[], kind: "agent_message_chunk" | "agent_thought_chunk" = "agent_message_chunk") =>
  updates.flatMap((u) =>
    (u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_thought_chunk") && u.sessionUpdate === kind && u.content.type === "text"
      ? [u.content.text]
      : [],
  );

function run(events: ProviderEvent[]): { mapper: UpdateMapper; updates: SessionUpdate[] } {
  const mapper = new UpdateMapper();
  return { mapper, updates: events.flatMap((e) => mapper.map(e)) };
}

describe("UpdateMapper", () => {
  test("text deltas go out as they arrive; the finished message adds nothing", () => {
    const { mapper, updates } = run([
      { type: "text_delta", itemId: "m1", delta: "Hel" },
      { type: "text_delta", itemId: "m1", delta: "lo" },
      { type: "message_done", itemId: "m1", text: "Hello" },
      { type: "completed" },
    ]);
    expect(texts(updates)).toEqual(["Hel", "lo"]);
    expect(mapper.finish("Hello")).toEqual([]);
  });

  test("a provider without deltas still shows its message, once", () => {
    const { mapper, updates } = run([{ type: "message_done", itemId: "m1", text: "Whole answer" }, { type: "completed" }]);
    expect(texts(updates)).toEqual(["Whole answer"]);
    expect(mapper.finish("Whole answer")).toEqual([]);
  });

  test("separate output items are set apart by a blank line, as the agent joins them", () => {
    const { updates } = run([
      { type: "text_delta", itemId: "m1", delta: "First." },
      { type: "message_done", itemId: "m1", text: "First." },
      { type: "text_delta", itemId: "m2", delta: "Second." },
    ]);
    expect(texts(updates)).toEqual(["First.", "\n\nSecond."]);
  });

  test("what the gateway adds to the final answer (the step-limit note) is sent; the streamed part is not", () => {
    const { mapper } = run([
      { type: "text_delta", itemId: "m1", delta: "Partial" },
      { type: "message_done", itemId: "m1", text: "Partial" },
    ]);
    expect(texts(mapper.finish("Partial\n\n_(I stopped after too many tool steps.)_"))).toEqual(["\n\n_(I stopped after too many tool steps.)_"]);
  });

  test("streamed deltas are never repeated, even when no item completed", () => {
    const { mapper } = run([{ type: "text_delta", itemId: "m1", delta: "Hello" }]);
    expect(mapper.finish("Hello")).toEqual([]);
  });

  test("reasoning is a thought chunk", () => {
    const { updates } = run([{ type: "reasoning_delta", itemId: "r1", delta: "hmm" }]);
    expect(updates).toEqual([{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } }]);
  });

  test("a tool call is pending when asked, in progress while it runs, completed when the model resumes", () => {
    const mapper = new UpdateMapper();
    expect(mapper.map({ type: "tool_call", callId: "c1", name: "send_attachment", arguments: '{"path":"a.txt"}' })).toEqual([
      { sessionUpdate: "tool_call", toolCallId: "c1", title: "send attachment: a.txt", kind: "other", status: "pending", rawInput: { path: "a.txt" } },
    ]);
    expect(mapper.map({ type: "completed" })).toEqual([{ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" }]);
    const next = mapper.map({ type: "text_delta", itemId: "m2", delta: "Done" });
    expect(next[0]).toEqual({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed" });
    expect(texts(next)).toEqual(["Done"]);
    expect(mapper.finish("Done")).toEqual([]);
  });

  test("a turn stopped while a tool was only asked for marks it failed", () => {
    const mapper = new UpdateMapper();
    mapper.map({ type: "tool_call", callId: "c1", name: "react", arguments: "not json" });
    expect(mapper.stop()).toEqual([{ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "failed" }]);
    expect(mapper.stop()).toEqual([]);
  });

  test("messages from outside the stream (notices, file lines) are set apart from streamed text", () => {
    const mapper = new UpdateMapper();
    mapper.map({ type: "text_delta", itemId: "m1", delta: "Here it is." });
    expect(texts(mapper.message("📎 a.txt (/w/a.txt)", "acp-1"))).toEqual(["\n\n📎 a.txt (/w/a.txt)"]);
    expect(mapper.message("", "acp-2")).toEqual([]);
  });

  test("tool titles", () => {
    expect(toolTitle("send_attachment", { path: "x.pdf" })).toBe("send attachment: x.pdf");
    expect(toolTitle("react", { emoji: "👍" })).toBe("react");
    expect(toolTitle("odd", "raw")).toBe("odd");
  });
});

describe("UpdateChannel and AcpTurnStream", () => {
  test("updates go out strictly in order even when sends are slow, and a failing send does not stop the rest", async () => {
    const sent: string[] = [];
    let n = 0;
    const channel = new UpdateChannel(async (update) => {
      // Later sends finish sooner if run concurrently: each yields a different number of turns.
      for (let turns = 5 - (n++ % 3); turns > 0; turns--) await Promise.resolve();
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" && update.content.text === "boom") throw new Error("closed");
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") sent.push(update.content.text);
    });
    const stream = new AcpTurnStream(new UpdateMapper(), channel);
    for (const delta of ["a", "b", "boom", "c", "d"]) stream.push({ type: "text_delta", itemId: "m1", delta });
    stream.push({ type: "message_done", itemId: "m1", text: "abboomcd" });
    await stream.finish("abboomcd");
    expect(sent).toEqual(["a", "b", "c", "d"]);
  });

  test("every event calls the hook (a cancel that raced the turn's start is re-asserted there)", () => {
    let calls = 0;
    const stream = new AcpTurnStream(new UpdateMapper(), new UpdateChannel(async () => {}), () => calls++);
    stream.push({ type: "completed" });
    stream.push({ type: "text_delta", itemId: "m", delta: "x" });
    expect(calls).toBe(2);
  });
});
