/**
 * One voice session: a companion on one side, one upstream session with
 * the provider's realtime API on the other (upstream.ts), and between them
 * what makes it the same assistant as in text:
 *
 * - the instructions are SOUL.md and the memory the text turns use (built
 *   by the caller, `instructions`), refreshed when what the owner says
 *   brings other memories up;
 * - the tools are the owner's, as the role table offers them to a `voice`
 *   turn (the caller passes the set); a call the model makes runs through
 *   the agent's own `runTool`, with this session's tool context, and its
 *   output goes back as a function call output — a name outside the set is
 *   refused like any unknown tool;
 * - both sides' transcripts are written to the session's conversation, in
 *   the order they were spoken.
 *
 * Interruption: when the owner speaks over an answer (the provider's voice
 * detection says so, or the companion sends `interrupt`), the response is
 * cancelled (`response.cancel`), the answer's audio item is truncated to
 * what the owner heard (`conversation.item.truncate`, so the model's idea
 * of what was said matches the owner's), and the companion is told to drop
 * what it has queued. What was heard is estimated as the audio sent so far,
 * capped by the time since its first part (a companion plays it in real
 * time), unless the companion says.
 *
 * `/stop` on a chat channel never reaches a session: its tools run on its
 * own signal, which only the session's end aborts.
 */

import { runTool } from "../../agent/agent.ts";
import type { Tool, ToolContext } from "../../agent/tools/types.ts";
import { resultText } from "../../agent/tools/types.ts";
import type { RealtimeSettings } from "../../config/realtime.ts";
import { describeError } from "../../kernel/errors.ts";
import { type Fault, faultLine, statusFault } from "../../kernel/fault-line.ts";
import type { Logger } from "../../kernel/log.ts";
import type { PressResult, ReplyButton, ReplyPort } from "../../message/index.ts";
import type { MessageSender } from "../../message/untrusted.ts";
import { pcmMs } from "./pcm.ts";
import { realtimeProfile } from "./profile.ts";
import { type CompanionEvent, type CompanionRequest, decodeAudio, type EndReason, type TurnDetection } from "./protocol.ts";
import {
  appendAudio,
  cancelResponse,
  commitAudio,
  connectUpstream,
  createResponse,
  functionOutput,
  type ServerEvent,
  sessionPatch,
  sessionUpdate,
  truncateItem,
  type Upstream,
  type UpstreamHandlers,
  UpstreamRefused,
} from "./upstream.ts";

/** How long the provider may take to accept the session's settings before it counts as refused. */
const SESSION_READY_MS = 15_000;
/** How long the owner's words may lag behind the answer before history goes on without them (a transcript that never came). */
const USER_TRANSCRIPT_WAIT_MS = 10_000;

/** How a session ended, for health and the log: a fault of the provider's, in page-safe form, when there was one. */
export interface SessionEnd {
  reason: EndReason;
  /** The provider refused the session or dropped it. */
  fault?: Fault;
  /** The WebSocket close code of a drop. */
  closeCode?: number;
}

export interface VoiceSessionDeps {
  settings: RealtimeSettings;
  turnDetection: TurnDetection;
  /** The session's own conversation (`realtime:<owner>:`): where both sides' words are kept. */
  conversation: string;
  /** Who talks: the owner, as history records them. */
  owner: MessageSender;
  /** The instructions for what the owner just said ("" at the start): SOUL.md, memory, the recent voice conversation. */
  instructions(said: string): string;
  /** The owner's tools for a voice turn, as the role table offers them. */
  tools: readonly Tool[];
  /** What the tools work with, besides what the session supplies (its signal, its notices). */
  toolContext: Omit<ToolContext, "effects" | "signal" | "say" | "port">;
  history: { append(key: string, role: "user" | "assistant", text: string, sender?: MessageSender): unknown };
  /** A button of a notice pressed on the companion: answered on the confirmation path, as the owner on this surface. */
  press(data: string): Promise<PressResult>;
  /** To the companion. */
  emit(event: CompanionEvent): void;
  /** Told once, when the session is over (whichever side ended it). */
  ended(end: SessionEnd): void;
  log: Logger;
  connect?: (url: string, apiKey: string | undefined, handlers: UpstreamHandlers) => Promise<Upstream>;
  now?: () => number;
}

/** One line of the conversation as spoken, written to history once it is known and everything said before it is. */
interface SpokenLine {
  item: string;
  role: "user" | "assistant";
  /** The words, once known; undefined while the transcript is pending. */
  text?: string;
  settled: boolean;
  since: number;
}

/** The answer audio item being played: what was sent of it, and when its first part went. */
interface PlayingItem {
  id: string;
  sentBytes: number;
  firstAt: number;
}

export class VoiceSession {
  private upstream: Upstream | undefined;
  private readonly stop = new AbortController();
  private readonly now: () => number;
  private mode: TurnDetection;
  private started = 0;
  private over = false;
  private maxTimer: ReturnType<typeof setTimeout> | undefined;
  private responseActive = false;
  /** The companion committed its audio (push-to-talk): the answer is asked for once the provider confirms it. */
  private commitPending = false;
  private playing: PlayingItem | undefined;
  /** Answer transcripts as they grow, by item. */
  private readonly partial = new Map<string, string>();
  /** The items of the response in progress: a cut answer's words are kept as far as they went. */
  private responseItems: string[] = [];
  /** Tool calls of the response in progress: their outputs go back together once it is done. */
  private calls: Array<Promise<{ callId: string; output: string }>> = [];
  private readonly lines: SpokenLine[] = [];
  private instructions = "";
  private readonly tools: ReadonlyMap<string, Tool>;
  private readySignal: ((outcome: { ok: true } | { ok: false; fault: Fault; why: string }) => void) | undefined;

  constructor(private readonly deps: VoiceSessionDeps) {
    this.now = deps.now ?? Date.now;
    this.mode = deps.turnDetection;
    this.tools = new Map(deps.tools.map((tool) => [tool.spec.name, tool]));
  }

  /** Whether the session is up (its companion was told `ready`) and not over. */
  get live(): boolean {
    return this.started > 0 && !this.over;
  }

  /** Open the upstream session and set it up; false (the companion told why) when the provider refused it. */
  async start(): Promise<boolean> {
    const { settings, log } = this.deps;
    const connect = this.deps.connect ?? connectUpstream;
    const ready = new Promise<{ ok: true } | { ok: false; fault: Fault; why: string }>((resolve) => (this.readySignal = resolve));
    try {
      this.upstream = await connect(settings.url, settings.apiKey, {
        event: (event) => this.onUpstream(event),
        closed: (code, ours) => this.onClosed(code, ours),
      });
    } catch (error) {
      const status = error instanceof UpstreamRefused ? error.status : undefined;
      log.warn("the realtime provider refused the session", { provider: settings.provider, error: describeError(error) });
      this.refuse({ fault: statusFault(status), ...(status !== undefined ? { status } : {}) });
      return false;
    }
    // Ended while connecting (the companion left, a shutdown): the connection just made goes too.
    if (this.over) {
      this.upstream.close();
      return false;
    }
    this.instructions = this.deps.instructions("");
    this.upstream.send(
      sessionUpdate({
        instructions: this.instructions,
        voice: settings.voice,
        turnDetection: this.mode,
        tools: this.deps.tools.map((tool) => ({ name: tool.spec.name, description: tool.spec.description, parameters: tool.spec.parameters })),
      }),
    );
    const timer = setTimeout(() => this.readySignal?.({ ok: false, fault: { fault: "timeout" }, why: "no session.updated in time" }), SESSION_READY_MS);
    const outcome = await ready;
    clearTimeout(timer);
    this.readySignal = undefined;
    if (this.over) return false;
    if (!outcome.ok) {
      log.warn("the realtime provider did not accept the session", { provider: settings.provider, why: outcome.why });
      this.refuse(outcome.fault);
      return false;
    }
    this.started = this.now();
    this.maxTimer = setTimeout(() => this.end("time_limit"), settings.maxSessionMs);
    this.deps.emit({
      type: "ready",
      conversation: this.deps.conversation,
      provider: settings.provider,
      model: settings.model,
      voice: settings.voice,
      turn_detection: this.mode,
      max_session_minutes: settings.maxSessionMs / 60_000,
    });
    log.info("voice session started", { provider: settings.provider, model: settings.model, turn_detection: this.mode });
    return true;
  }

  /** A request from the companion (already checked against the protocol). */
  handle(request: CompanionRequest): void {
    if (this.over) return;
    const upstream = this.upstream;
    switch (request.type) {
      case "audio": {
        const pcm = decodeAudio(request.audio);
        if (!pcm) this.deps.emit({ type: "error", code: "bad_audio", message: "audio must be base64 of PCM16 samples (whole, at most 5 s a frame)" });
        else if (this.live) upstream?.send(appendAudio(request.audio));
        return;
      }
      case "commit":
        // With the provider's voice detection on, it commits by itself; a second commit would find the buffer empty.
        // The answer is asked for once the provider says the audio is committed (an empty buffer is not).
        if (this.live && this.mode === "manual") {
          this.commitPending = true;
          upstream?.send(commitAudio());
        }
        return;
      case "interrupt":
        this.interrupt(request.played_ms, true);
        return;
      case "mode":
        if (request.turn_detection !== this.mode) {
          this.mode = request.turn_detection;
          upstream?.send(sessionPatch({ turnDetection: this.mode }));
        }
        return;
      case "press":
        void this.deps.press(request.data).then(
          (result) => this.deps.emit({ type: "notice", text: result.text }),
          (error) => this.deps.log.warn("a notice button press failed", { error: describeError(error) }),
        );
        return;
      case "stop":
        this.end("stopped");
        return;
      case "start":
        this.deps.emit({ type: "error", code: "already_started", message: "this connection's session is already running" });
        return;
    }
  }

  /** End the session (idempotent): close the upstream, stop its tools, keep what was said, tell the companion. */
  end(reason: EndReason, fault?: Fault, closeCode?: number): void {
    if (this.over) return;
    this.over = true;
    clearTimeout(this.maxTimer);
    this.stop.abort(new DOMException(`voice session ended: ${reason}`, "AbortError"));
    this.upstream?.close();
    this.settleResponse("cut");
    this.flushLines(true);
    this.readySignal?.({ ok: false, fault: fault ?? { fault: "unreachable" }, why: reason });
    // A companion that left hears nothing more; any other is told, even when the session had not begun.
    if (reason !== "companion_left") this.deps.emit({ type: "ended", reason, message: endWords(reason, fault) });
    if (this.started > 0) {
      this.deps.log.info("voice session ended", {
        reason,
        minutes: Math.round((this.now() - this.started) / 6000) / 10,
        ...(closeCode ? { close_code: closeCode } : {}),
      });
    }
    this.deps.ended({ reason, ...(fault ? { fault } : {}), ...(closeCode !== undefined ? { closeCode } : {}) });
  }

  /** The provider would not start the session: the companion is told why, in page-safe words. */
  private refuse(fault: Fault): void {
    const words = faultLine(fault);
    this.deps.emit({ type: "error", code: "upstream_refused", message: `the realtime provider ${this.deps.settings.provider}: ${words}` });
    this.deps.emit({ type: "ended", reason: "upstream_refused", message: endWords("upstream_refused", fault) });
    this.over = true;
    this.upstream?.close();
    this.deps.ended({ reason: "upstream_refused", fault });
  }

  private onClosed(code: number, ours: boolean): void {
    if (ours || this.over) return;
    // Before the session was accepted, a close is a refusal; after, a drop the companion may restart from.
    if (this.started === 0) {
      this.readySignal?.({ ok: false, fault: { fault: "rejected" }, why: `closed (code ${code})` });
      return;
    }
    this.deps.log.warn("the realtime provider closed the session", { provider: this.deps.settings.provider, code });
    this.end("upstream_closed", { fault: "cut_off" }, code);
  }

  private onUpstream(event: ServerEvent): void {
    if (this.over) return;
    const { emit } = this.deps;
    switch (event.type) {
      case "session.updated":
        this.readySignal?.({ ok: true });
        return;
      case "error":
        this.deps.log.warn("the realtime provider reported an error", { code: event.code, type: event.kind, error: event.message });
        if (event.code === "input_audio_buffer_commit_empty") this.commitPending = false;
        if (this.started === 0) {
          this.readySignal?.({ ok: false, fault: { fault: "rejected" }, why: event.code || event.kind });
          return;
        }
        // Its words stay in the log (they can repeat what was said); the companion gets the code.
        emit({ type: "error", code: "upstream", message: `the realtime provider reported an error${event.code ? ` (${event.code})` : ""}` });
        return;
      case "input_audio_buffer.speech_started":
        emit({ type: "speech_started" });
        if (this.answerPlaying()) this.interrupt(undefined, false);
        return;
      case "input_audio_buffer.speech_stopped":
        emit({ type: "speech_stopped" });
        return;
      case "input_audio_buffer.committed":
        this.line(event.item_id, "user");
        if (this.commitPending) {
          this.commitPending = false;
          if (!this.responseActive) this.upstream?.send(createResponse());
        }
        return;
      case "conversation.item.input_audio_transcription.delta":
        emit({ type: "transcript", role: "user", item_id: event.item_id, delta: event.delta, final: false });
        return;
      case "conversation.item.input_audio_transcription.completed":
        emit({ type: "transcript", role: "user", item_id: event.item_id, text: event.transcript, final: true });
        this.settle(event.item_id, "user", event.transcript);
        this.refreshInstructions(event.transcript);
        return;
      case "conversation.item.input_audio_transcription.failed":
        this.settle(event.item_id, "user", undefined);
        return;
      case "response.created":
        this.responseActive = true;
        this.responseItems = [];
        this.calls = [];
        return;
      case "response.output_item.added":
        if (event.item_type === "message") {
          this.responseItems.push(event.item_id);
          this.line(event.item_id, "assistant");
        }
        return;
      case "response.output_audio.delta": {
        if (this.playing?.id !== event.item_id) this.playing = { id: event.item_id, sentBytes: 0, firstAt: this.now() };
        this.playing.sentBytes += Buffer.byteLength(event.delta, "base64");
        emit({ type: "audio", audio: event.delta, item_id: event.item_id });
        return;
      }
      case "response.output_audio_transcript.delta":
        this.partial.set(event.item_id, (this.partial.get(event.item_id) ?? "") + event.delta);
        emit({ type: "transcript", role: "assistant", item_id: event.item_id, delta: event.delta, final: false });
        return;
      case "response.output_audio_transcript.done":
        this.partial.delete(event.item_id);
        emit({ type: "transcript", role: "assistant", item_id: event.item_id, text: event.transcript, final: true });
        this.settle(event.item_id, "assistant", event.transcript);
        return;
      case "response.function_call_arguments.done":
        this.calls.push(this.runCall(event.call_id, event.name, event.arguments));
        return;
      case "response.done":
        void this.responseDone(event.status);
        return;
      default:
        return;
    }
  }

  /** A response is over: its tool calls' outputs go back and the model answers them; else the companion hears it is done. */
  private async responseDone(status: string): Promise<void> {
    this.responseActive = false;
    this.settleResponse(status === "completed" ? "whole" : "cut");
    const calls = this.calls;
    this.calls = [];
    if (calls.length === 0 || status !== "completed") {
      this.deps.emit({ type: "response_done", status: responseStatus(status) });
      return;
    }
    const outputs = await Promise.all(calls);
    if (this.over) return;
    for (const { callId, output } of outputs) this.upstream?.send(functionOutput(callId, output));
    // The owner may have spoken meanwhile, and the provider answered that: its response hears the outputs too.
    if (!this.responseActive) this.upstream?.send(createResponse());
  }

  /** Run one call the model made by voice, as the owner's tool; the output is what the model hears. */
  private async runCall(callId: string, name: string, args: string): Promise<{ callId: string; output: string }> {
    const { emit, log } = this.deps;
    const started = this.now();
    emit({ type: "tool", call_id: callId, name, state: "running" });
    const say = async (markdown: string, buttons?: ReplyButton[]) => emit({ type: "notice", text: markdown, ...(buttons?.length ? { buttons } : {}) });
    const context: ToolContext = {
      ...this.deps.toolContext,
      port: noticePort(say),
      say,
      effects: { reacted: false, attachments: 0 },
      signal: this.stop.signal,
    };
    let output: string;
    try {
      const result = await runTool(this.tools, { name, arguments: args }, context);
      output = resultText(result);
      if (typeof result !== "string" && result.images.length > 0) output += "\n(images are not shown in a voice session)";
    } catch (error) {
      // Only the session's end stops a tool; its output has nobody to go to.
      output = `error: ${name} was stopped`;
      log.debug("a voice tool call was stopped", { tool: name, error: describeError(error) });
    }
    const ok = !output.startsWith("error:");
    log.info("voice tool call", { tool: name, outcome: ok ? "ok" : "error", offered: this.tools.has(name), duration_ms: this.now() - started });
    emit({ type: "tool", call_id: callId, name, state: ok ? "done" : "failed" });
    return { callId, output };
  }

  /** Whether an answer is still being spoken or played, by what the session knows. */
  private answerPlaying(): boolean {
    if (this.responseActive) return true;
    const item = this.playing;
    return item !== undefined && this.heardMs(item) < pcmMs(item.sentBytes);
  }

  private heardMs(item: PlayingItem, played?: number): number {
    return Math.min(pcmMs(item.sentBytes), played ?? this.now() - item.firstAt);
  }

  /** Cut the answer: cancel the response in progress, truncate its audio to what was heard, tell the companion to stop playing. */
  private interrupt(played: number | undefined, asked: boolean): void {
    if (!this.live) return;
    const item = this.playing;
    if (!asked && !this.answerPlaying()) return;
    if (this.responseActive) this.upstream?.send(cancelResponse());
    if (item) {
      const heard = this.heardMs(item, played);
      if (heard < pcmMs(item.sentBytes)) this.upstream?.send(truncateItem(item.id, heard));
    }
    this.playing = undefined;
    this.deps.emit({ type: "interrupted", ...(item ? { item_id: item.id } : {}) });
  }

  /** New memories may matter for what the owner just said: the instructions follow, when they change. */
  private refreshInstructions(said: string): void {
    const next = this.deps.instructions(said);
    if (next === this.instructions) return;
    this.instructions = next;
    this.upstream?.send(sessionPatch({ instructions: next }));
  }

  /** The answer items of a response that ended: words not finished are kept as far as they went, marked as cut. */
  private settleResponse(how: "whole" | "cut"): void {
    for (const item of this.responseItems) {
      const line = this.lines.find((l) => l.item === item);
      if (!line || line.settled) continue;
      const words = (this.partial.get(item) ?? "").trim();
      this.partial.delete(item);
      this.settle(item, "assistant", words === "" ? undefined : how === "cut" ? `${words} … [cut off]` : words);
    }
    this.responseItems = [];
  }

  private line(item: string, role: "user" | "assistant"): SpokenLine {
    let line = this.lines.find((l) => l.item === item);
    if (!line) {
      line = { item, role, settled: false, since: this.now() };
      this.lines.push(line);
    }
    return line;
  }

  private settle(item: string, role: "user" | "assistant", text: string | undefined): void {
    const line = this.line(item, role);
    line.settled = true;
    if (text !== undefined && text.trim() !== "") line.text = text.trim();
    this.flushLines(false);
  }

  /** Write every line whose turn has come; at the end, everything known. */
  private flushLines(final: boolean): void {
    const { history, conversation, owner } = this.deps;
    while (this.lines.length > 0) {
      const head = this.lines[0]!;
      const waitedOut = head.role === "user" && this.now() - head.since > USER_TRANSCRIPT_WAIT_MS && this.lines.some((l) => l.settled);
      if (!head.settled && !final && !waitedOut) return;
      this.lines.shift();
      if (head.text === undefined) continue;
      try {
        if (head.role === "user") history.append(conversation, "user", head.text, owner);
        else history.append(conversation, "assistant", head.text);
      } catch (error) {
        this.deps.log.error("a voice transcript could not be kept", { error: describeError(error) });
      }
    }
  }
}

/** The companion protocol's words for how a response ended. */
function responseStatus(status: string): "completed" | "cancelled" | "incomplete" | "failed" {
  return status === "cancelled" || status === "incomplete" || status === "failed" ? status : "completed";
}

/** Why a session ended, for the person at the companion. */
function endWords(reason: EndReason, fault?: Fault): string {
  switch (reason) {
    case "stopped":
      return "The voice session ended.";
    case "time_limit":
      return "The voice session reached its time limit ([fermix_core.realtime] max_session_minutes); start another to go on.";
    case "upstream_closed":
      return "The realtime provider closed the session; start another to go on.";
    case "upstream_refused":
      return `The realtime provider refused the session: ${fault ? faultLine(fault) : "see the daemon's log"}.`;
    case "shutdown":
      return "Fermix is stopping.";
    case "disabled":
      return "Realtime voice was turned off ([fermix_core.realtime] enabled).";
    case "companion_left":
      return "The companion went away.";
  }
}

/** The reply port a voice session's tools see: what they send is a notice on the companion; nothing is edited, deleted or reacted to. */
export function noticePort(say: (markdown: string, buttons?: ReplyButton[]) => Promise<void>): ReplyPort {
  let sent = 0;
  return {
    capabilities: realtimeProfile.capabilities,
    async sendText(message) {
      await say(message.source ?? message.text, message.buttons);
      return { id: `notice-${++sent}` };
    },
    async editText() {},
    async deleteMessage() {},
    async react() {},
    async sendMedia(media) {
      await say(`📎 ${media.filename}${media.caption ? ` — ${media.caption}` : ""}`);
      return { id: `notice-${++sent}` };
    },
    async typing() {},
  };
}
