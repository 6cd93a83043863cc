/**
 * A turn as the editor sees it: provider events become ACP `session/update`
 * notifications as they arrive — text deltas as `agent_message_chunk`,
 * reasoning as `agent_thought_chunk`, tool activity as `tool_call` then
 * `tool_call_update`. The mapping is pure (UpdateMapper) and the sending is
 * ordered (UpdateChannel), so each is tested on its own.
 */
import type { SessionUpdate, ToolCallStatus } from "@agentclientprotocol/sdk";
import type { TurnStream } from "../../gateway/ingest.ts";
import type { ProviderEvent } from "../../message/stream.ts";

export type { SessionUpdate };

/** A plain text chunk of the agent's answer. */
export function messageChunk(text: string): SessionUpdate {
  return { sessionUpdate: "agent_message_chunk", content: { type: "text", text } };
}

/** A short title for a tool call, as the editor lists it. */
export function toolTitle(name: string, args: unknown): string {
  const label = name.replace(/_/g, " ");
  const path = typeof args === "object" && args !== null ? (args as Record<string, unknown>).path : undefined;
  return typeof path === "string" && path !== "" ? `${label}: ${path}` : label;
}

function parseArguments(text: string): unknown {
  try {
    return text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return text;
  }
}

/** Turns one turn's provider events into session updates; pure, one per prompt. */
export class UpdateMapper {
  /** Output items whose deltas already went out (their message_done adds nothing). */
  private readonly streamed = new Set<string>();
  /** The complete assistant texts, as the agent joins them into its answer. */
  private readonly texts: string[] = [];
  private lastBlock: string | undefined;
  private wroteText = false;
  /** Tool calls of this turn that have not been settled, by call id. */
  private readonly tools = new Map<string, ToolCallStatus>();
  /** A model step ended with tool calls: the next event means those tools have run. */
  private toolsRunning = false;

  /** The updates for one provider event. */
  map(event: ProviderEvent): SessionUpdate[] {
    const out: SessionUpdate[] = [];
    if (this.toolsRunning) {
      this.toolsRunning = false;
      out.push(...this.settle("completed"));
    }
    switch (event.type) {
      case "text_delta":
        if (event.delta === "") break;
        this.streamed.add(event.itemId);
        out.push(this.text(event.delta, event.itemId));
        break;
      case "reasoning_delta":
        if (event.delta !== "") out.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.delta } });
        break;
      case "message_done":
        if (event.text.trim() !== "") this.texts.push(event.text);
        // A provider that does not stream deltas still shows its text, once.
        if (!this.streamed.has(event.itemId) && event.text !== "") out.push(this.text(event.text, event.itemId));
        break;
      case "tool_call": {
        const rawInput = parseArguments(event.arguments);
        this.tools.set(event.callId, "pending");
        out.push({ sessionUpdate: "tool_call", toolCallId: event.callId, title: toolTitle(event.name, rawInput), kind: "other", status: "pending", rawInput });
        break;
      }
      case "completed":
        // The response is complete: the agent now runs the tools it asked for.
        for (const [id, status] of this.tools) {
          if (status !== "pending") continue;
          this.tools.set(id, "in_progress");
          out.push({ sessionUpdate: "tool_call_update", toolCallId: id, status: "in_progress" });
        }
        this.toolsRunning = this.tools.size > 0;
        break;
    }
    return out;
  }

  /** A whole message from outside the model stream (a notice, a file line), set apart from earlier text. */
  message(text: string, block: string): SessionUpdate[] {
    return text === "" ? [] : [this.text(text, block)];
  }

  /**
   * The end of an answered turn: tools settle, and whatever of the final
   * Markdown did not stream (a closing note the gateway added) goes out.
   * Text that already went out as chunks is never sent again.
   */
  finish(markdown: string): SessionUpdate[] {
    const out = this.settle("completed");
    // Deltas went out but no item completed: the answer cannot be lined up with them, and sending it would repeat them.
    if (this.streamed.size > 0 && this.texts.length === 0) return out;
    const streamed = this.texts.join("\n\n").trim();
    if (markdown.startsWith(streamed)) {
      const rest = markdown.slice(streamed.length);
      if (rest.trim() !== "") out.push(this.text(streamed === "" ? rest : rest.replace(/^\s+/, ""), "finish"));
    }
    return out;
  }

  /**
   * The end of a turn that was not answered (cancelled, failed, or only a
   * file sent): tools whose step had ended ran, the others never finished.
   */
  stop(): SessionUpdate[] {
    return this.settle(this.toolsRunning ? "completed" : "failed");
  }

  private text(text: string, block: string): SessionUpdate {
    // Separate output items by a blank line, as the agent joins them in its answer.
    const separated = this.wroteText && block !== this.lastBlock ? `\n\n${text}` : text;
    this.lastBlock = block;
    this.wroteText = true;
    return messageChunk(separated);
  }

  private settle(status: ToolCallStatus): SessionUpdate[] {
    const out: SessionUpdate[] = [];
    for (const [id, current] of this.tools) {
      if (current === "completed" || current === "failed") continue;
      out.push({ sessionUpdate: "tool_call_update", toolCallId: id, status });
    }
    this.tools.clear();
    return out;
  }
}

/**
 * One session's outgoing updates, sent strictly in order: the SDK handles
 * sends concurrently, and an editor shows chunks in the order they arrive.
 * A send to a closed connection is dropped quietly (the turn is being
 * cancelled anyway); `idle()` resolves once everything queued went out.
 */
export class UpdateChannel {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly notify: (update: SessionUpdate) => Promise<void>) {}

  send(update: SessionUpdate): Promise<void> {
    this.tail = this.tail.then(() => this.notify(update)).catch(() => {});
    return this.tail;
  }

  idle(): Promise<void> {
    return this.tail;
  }
}

/** The TurnStream the gateway drives for an ACP prompt: every event goes out at once, in order. */
export class AcpTurnStream implements TurnStream {
  constructor(
    private readonly mapper: UpdateMapper,
    private readonly channel: UpdateChannel,
    /** Called on every event: lets the session re-assert a cancel that raced the turn's start. */
    private readonly onEvent: () => void = () => {},
  ) {}

  push(event: ProviderEvent): void {
    this.onEvent();
    for (const update of this.mapper.map(event)) void this.channel.send(update);
  }

  async finish(markdown: string): Promise<void> {
    for (const update of this.mapper.finish(markdown)) void this.channel.send(update);
    await this.channel.idle();
  }

  async stop(): Promise<void> {
    for (const update of this.mapper.stop()) void this.channel.send(update);
    await this.channel.idle();
  }

  /** What the editor has shown stays: its updates are final as they go; the turn's failure is the prompt's error. */
  async cut(): Promise<void> {
    await this.stop();
  }
}
