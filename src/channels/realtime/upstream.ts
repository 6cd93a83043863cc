/**
 * The provider's side of a voice session: OpenAI's Realtime API over one
 * WebSocket (`wss://…/realtime?model=…`, `Authorization: Bearer <key>`),
 * JSON events each way, each with its `type`. This module knows the wire —
 * the events Fermix sends, built by the functions below, and the server
 * events it reads, narrowed from what arrives — and nothing of sessions,
 * companions or tools (session.ts).
 *
 * Audio is `audio/pcm` at 24 kHz both ways (pcm.ts). Turn detection is the
 * server's voice activity detection, with `interrupt_response` off: when the
 * owner speaks over an answer, Fermix cancels and truncates it itself, the
 * same way in hands-free and push-to-talk (no detection: `commit` and
 * `response.create` from the companion's word).
 */
import { SAMPLE_RATE } from "./pcm.ts";
import type { TurnDetection } from "./protocol.ts";

/** How long the WebSocket handshake may take before the session is refused as unreachable. */
const CONNECT_TIMEOUT_MS = 15_000;
/** The speech-to-text model that writes the owner's words down (the realtime model hears the audio itself). */
export const INPUT_TRANSCRIPTION_MODEL = "gpt-4o-mini-transcribe";

const AUDIO_FORMAT = { type: "audio/pcm", rate: SAMPLE_RATE } as const;

/** A function the model may call, as the session offers it. */
export interface RealtimeTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface SessionConfig {
  instructions: string;
  voice: string;
  turnDetection: TurnDetection;
  tools: readonly RealtimeTool[];
}

/** The provider's turn detection for a mode: its voice activity detection, or none (the companion commits). */
export function turnDetectionFor(mode: TurnDetection): Record<string, unknown> | null {
  return mode === "server" ? { type: "server_vad", create_response: true, interrupt_response: false } : null;
}

/** Events Fermix sends. */
export type ClientEvent =
  | { type: "session.update"; session: Record<string, unknown> }
  | { type: "input_audio_buffer.append"; audio: string }
  | { type: "input_audio_buffer.commit" }
  | { type: "response.create" }
  | { type: "response.cancel" }
  | { type: "conversation.item.truncate"; item_id: string; content_index: number; audio_end_ms: number }
  | { type: "conversation.item.create"; item: { type: "function_call_output"; call_id: string; output: string } };

/** The whole session, set once at the start. */
export function sessionUpdate(config: SessionConfig): ClientEvent {
  return {
    type: "session.update",
    session: {
      type: "realtime",
      output_modalities: ["audio"],
      instructions: config.instructions,
      audio: {
        input: { format: AUDIO_FORMAT, transcription: { model: INPUT_TRANSCRIPTION_MODEL }, turn_detection: turnDetectionFor(config.turnDetection) },
        output: { format: AUDIO_FORMAT, voice: config.voice },
      },
      tools: config.tools.map((tool) => ({ type: "function", name: tool.name, description: tool.description, parameters: tool.parameters })),
      tool_choice: "auto",
    },
  };
}

/** Only what changes mid-session: the instructions (new memories), or who detects the end of a turn. */
export function sessionPatch(patch: { instructions?: string; turnDetection?: TurnDetection }): ClientEvent {
  const session: Record<string, unknown> = { type: "realtime" };
  if (patch.instructions !== undefined) session.instructions = patch.instructions;
  if (patch.turnDetection !== undefined) session.audio = { input: { turn_detection: turnDetectionFor(patch.turnDetection) } };
  return { type: "session.update", session };
}

export const appendAudio = (audio: string): ClientEvent => ({ type: "input_audio_buffer.append", audio });
export const commitAudio = (): ClientEvent => ({ type: "input_audio_buffer.commit" });
export const createResponse = (): ClientEvent => ({ type: "response.create" });
export const cancelResponse = (): ClientEvent => ({ type: "response.cancel" });
export const truncateItem = (itemId: string, audioEndMs: number): ClientEvent => ({
  type: "conversation.item.truncate",
  item_id: itemId,
  content_index: 0,
  audio_end_ms: Math.max(0, Math.floor(audioEndMs)),
});
export const functionOutput = (callId: string, output: string): ClientEvent => ({
  type: "conversation.item.create",
  item: { type: "function_call_output", call_id: callId, output },
});

/** The server events a session acts on, narrowed; anything else is `other`. */
export type ServerEvent =
  | { type: "session.created" | "session.updated" }
  | { type: "input_audio_buffer.speech_started" | "input_audio_buffer.speech_stopped" }
  | { type: "input_audio_buffer.committed"; item_id: string }
  | { type: "conversation.item.input_audio_transcription.delta"; item_id: string; delta: string }
  | { type: "conversation.item.input_audio_transcription.completed"; item_id: string; transcript: string }
  | { type: "conversation.item.input_audio_transcription.failed"; item_id: string }
  | { type: "response.created"; response_id: string }
  | { type: "response.output_item.added"; item_id: string; item_type: string }
  | { type: "response.output_audio.delta"; item_id: string; delta: string }
  | { type: "response.output_audio_transcript.delta"; item_id: string; delta: string }
  | { type: "response.output_audio_transcript.done"; item_id: string; transcript: string }
  | { type: "response.function_call_arguments.done"; item_id: string; call_id: string; name: string; arguments: string }
  | { type: "response.done"; status: string }
  | { type: "error"; code: string; kind: string; message: string }
  | { type: "other"; name: string };

const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** A server event from its JSON text; undefined when it is not an event at all. */
export function readServerEvent(text: string): ServerEvent | undefined {
  let raw: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || typeof (parsed as { type?: unknown }).type !== "string") return undefined;
    raw = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const type = raw.type as string;
  switch (type) {
    case "session.created":
    case "session.updated":
    case "input_audio_buffer.speech_started":
    case "input_audio_buffer.speech_stopped":
      return { type };
    case "input_audio_buffer.committed":
    case "conversation.item.input_audio_transcription.failed":
      return { type, item_id: str(raw.item_id) };
    case "conversation.item.input_audio_transcription.delta":
    case "response.output_audio.delta":
    case "response.output_audio_transcript.delta":
      return { type, item_id: str(raw.item_id), delta: str(raw.delta) };
    case "conversation.item.input_audio_transcription.completed":
    case "response.output_audio_transcript.done":
      return { type, item_id: str(raw.item_id), transcript: str(raw.transcript) };
    case "response.created":
      return { type, response_id: str((raw.response as { id?: unknown } | undefined)?.id) };
    case "response.output_item.added": {
      const item = (raw.item ?? {}) as { id?: unknown; type?: unknown };
      return { type, item_id: str(item.id), item_type: str(item.type) };
    }
    case "response.function_call_arguments.done":
      return { type, item_id: str(raw.item_id), call_id: str(raw.call_id), name: str(raw.name), arguments: str(raw.arguments) };
    case "response.done":
      return { type, status: str((raw.response as { status?: unknown } | undefined)?.status) || "completed" };
    case "error": {
      const error = (raw.error ?? {}) as { code?: unknown; type?: unknown; message?: unknown };
      return { type, code: str(error.code), kind: str(error.type), message: str(error.message) };
    }
    default:
      return { type: "other", name: type };
  }
}

/** The provider would not start a session: its HTTP status when it answered the handshake with one. */
export class UpstreamRefused extends Error {
  override name = "UpstreamRefused";
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface UpstreamHandlers {
  event(event: ServerEvent): void;
  /** The socket closed; `ours`: Fermix closed it. */
  closed(code: number, ours: boolean): void;
}

/** One open session with the provider. */
export interface Upstream {
  send(event: ClientEvent): void;
  /** Close it (idempotent); `closed` is still told, with `ours`. */
  close(): void;
}

/** Open the WebSocket; rejects with UpstreamRefused when the handshake fails or takes too long. */
export function connectUpstream(url: string, apiKey: string | undefined, handlers: UpstreamHandlers): Promise<Upstream> {
  // Bun's WebSocket takes headers in its options (not in the browser's API): the key never goes in the URL.
  const socket = new WebSocket(url, { headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {} });
  let ours = false;
  let opened = false;
  const upstream: Upstream = {
    send: (event) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(event));
    },
    close: () => {
      ours = true;
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.close(1000);
    },
  };
  return new Promise<Upstream>((resolve, reject) => {
    const timer = setTimeout(() => {
      ours = true;
      socket.close();
      reject(new UpstreamRefused("the realtime endpoint did not answer in time"));
    }, CONNECT_TIMEOUT_MS);
    socket.addEventListener("open", () => {
      opened = true;
      clearTimeout(timer);
      resolve(upstream);
    });
    socket.addEventListener("error", (event) => {
      if (opened) return;
      clearTimeout(timer);
      // Bun says "Expected 101 status code: 401" when the server answered the handshake with a status.
      const message = (event as ErrorEvent).message ?? "";
      const status = /status code: (\d{3})/.exec(message)?.[1];
      reject(new UpstreamRefused("the realtime endpoint refused the connection", status ? Number(status) : undefined));
    });
    socket.addEventListener("message", (message) => {
      const text = typeof message.data === "string" ? message.data : new TextDecoder().decode(message.data as ArrayBuffer);
      const event = readServerEvent(text);
      if (event) handlers.event(event);
    });
    socket.addEventListener("close", (event) => {
      clearTimeout(timer);
      if (!opened) {
        reject(new UpstreamRefused("the realtime endpoint closed the connection before the session began"));
        return;
      }
      handlers.closed(event.code, ours);
    });
  });
}
