/**
 * The companion protocol (docs/realtime.md): how a companion — `fermix
 * talk`, the /talk page, any app on `<home>/realtime.sock` — talks with the
 * daemon's voice session. One JSON object per line on the socket, one per
 * text frame on the page's WebSocket; the same objects both ways. Audio is
 * base64 of PCM16 little-endian mono at 24 kHz (pcm.ts), in both
 * directions. Requests are checked against their schema here, so the
 * session only ever sees well-formed ones.
 */
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { SAMPLE_RATE } from "./pcm.ts";

/** The protocol's version, said in `hello`; a change a companion must know of raises it. */
export const PROTOCOL_VERSION = 1;
/** The longest request line taken (characters): about 5 s of audio in one frame. */
export const MAX_LINE = 512 * 1024;
/** The most audio one `audio` request may carry (bytes of PCM16). */
export const MAX_FRAME_BYTES = 5 * SAMPLE_RATE * 2;

/** Who decides when the owner has finished speaking: the provider (by voice activity), or the companion with `commit`. */
export const TURN_DETECTION = ["server", "manual"] as const;
export type TurnDetection = (typeof TURN_DETECTION)[number];

const Detection = Type.Union(TURN_DETECTION.map((mode) => Type.Literal(mode)));

/** What a companion may send. */
export const CompanionRequestSchema = Type.Union([
  /** Start a voice session (or restart one that ended). */
  Type.Object({
    type: Type.Literal("start"),
    turn_detection: Type.Optional(Detection),
    /** Who is talking through what, for the log and `/tasks` ("fermix talk", "the Talk page"). */
    client: Type.Optional(Type.String({ maxLength: 80 })),
  }),
  /** Microphone audio: base64 PCM16 mono at 24 kHz. */
  Type.Object({ type: Type.Literal("audio"), audio: Type.String({ minLength: 1, maxLength: Math.ceil(MAX_FRAME_BYTES / 3) * 4 }) }),
  /** The owner finished speaking (push-to-talk released, the end of a recording): answer now. */
  Type.Object({ type: Type.Literal("commit") }),
  /** Cut the answer playing; `played_ms`: how much of it the owner heard. */
  Type.Object({ type: Type.Literal("interrupt"), played_ms: Type.Optional(Type.Integer({ minimum: 0 })) }),
  /** Switch between hands-free (server) and push-to-talk (manual) in a running session. */
  Type.Object({ type: Type.Literal("mode"), turn_detection: Detection }),
  /** A button of a notice was pressed (an access request's Approve or Deny). */
  Type.Object({ type: Type.Literal("press"), data: Type.String({ minLength: 1, maxLength: 64 }) }),
  /** End the session; the connection stays open for another `start`. */
  Type.Object({ type: Type.Literal("stop") }),
]);
export type CompanionRequest = Static<typeof CompanionRequestSchema>;

/** Why a session ended. */
export type EndReason = "stopped" | "time_limit" | "upstream_closed" | "upstream_refused" | "shutdown" | "disabled" | "companion_left";

/** What the daemon sends a companion. */
export type CompanionEvent =
  /** On connecting: the protocol, the audio format, and whether a session can start now. */
  | { type: "hello"; protocol: number; audio: { format: "pcm16"; rate: number; channels: 1 }; enabled: boolean }
  /** The session is up: speak. */
  | {
      type: "ready";
      conversation: string;
      provider: string;
      model: string;
      voice: string;
      turn_detection: TurnDetection;
      max_session_minutes: number;
    }
  /** Answer audio, in order; `item_id` names the answer it belongs to. */
  | { type: "audio"; audio: string; item_id: string }
  /** A transcript as it grows (`delta`), then whole (`text`, `final`). */
  | { type: "transcript"; role: "user" | "assistant"; item_id: string; delta?: string; text?: string; final: boolean }
  | { type: "speech_started" }
  | { type: "speech_stopped" }
  /** Stop playing the answer now and drop what is queued of it. */
  | { type: "interrupted"; item_id?: string }
  /** A tool the assistant called by voice, as it runs. */
  | { type: "tool"; call_id: string; name: string; state: "running" | "done" | "failed" }
  /** A message for the owner's eyes (an access request), with buttons to press. */
  | { type: "notice"; text: string; buttons?: Array<{ label: string; data: string }> }
  /** The answer to what the owner said is complete (spoken in full, or cut). */
  | { type: "response_done"; status: "completed" | "cancelled" | "incomplete" | "failed" }
  | { type: "error"; code: string; message: string }
  /** The session is over; another `start` begins a new one. */
  | { type: "ended"; reason: EndReason; message: string };

/** A request line, parsed and checked: the request, or what is wrong with it in a few words. */
export function parseRequest(line: string): CompanionRequest | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: "not JSON" };
  }
  if (Value.Check(CompanionRequestSchema, value)) return value;
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  return { error: typeof type === "string" ? `a "${type}" request that does not fit the protocol` : "a request without a known type" };
}

/** Base64 audio as PCM16 bytes; undefined when it is not base64 of whole samples. */
export function decodeAudio(base64: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(base64, "base64");
  if (bytes.byteLength === 0 || bytes.byteLength % 2 !== 0 || bytes.byteLength > MAX_FRAME_BYTES) return undefined;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export const encodeEvent = (event: CompanionEvent | CompanionRequest): string => `${JSON.stringify(event)}\n`;
