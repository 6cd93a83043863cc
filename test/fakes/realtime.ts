/**
 * A fake of OpenAI's Realtime API over WebSocket on loopback, written from
 * its documented events: `GET <base>/realtime?model=…` upgraded with
 * `Authorization: Bearer <key>`, JSON events each way.
 *
 *   const fake = await startRealtimeFake({ apiKey: "sk-voice" });
 *   fake.script({ heard: "what time is it", responses: [respond.call("list_jobs", {}), respond.say("It is noon.")] });
 *   // base_url = fake.url (it ends in /v1); the endpoint is ws://…/v1/realtime
 *
 * It checks what it receives against the documented client events and
 * keeps every problem in `violations` (a test asserts there are none): the
 * session's fields (`type: "realtime"`, instructions, audio formats
 * `audio/pcm` at 24 kHz, a voice, turn detection, function tools with JSON
 * Schema parameters), audio appends (base64 of whole PCM16 samples, only
 * once the session is set up), function call outputs (for a call it made,
 * once), truncations (of an audio item it sent, no further than it sent),
 * a cancel only while a response runs, a response.create only while none does.
 *
 * It answers as the service does: `session.created` on connect,
 * `session.updated` to each update; a commit (or, with server turn
 * detection, enough audio: its stand-in for voice activity detection) is
 * `input_audio_buffer.committed` and the transcript of what it "heard";
 * then the scripted responses — a function call (its arguments streamed),
 * or speech: audio deltas (a tone) with transcript deltas, optionally paced
 * and held open until cancelled; `bargeIn` makes new audio during it count
 * as speech (`input_audio_buffer.speech_started`).
 */
import type { Server, ServerWebSocket } from "bun";

const RATE = 24_000;
const KNOWN_CLIENT_EVENTS = new Set([
  "session.update",
  "input_audio_buffer.append",
  "input_audio_buffer.commit",
  "input_audio_buffer.clear",
  "conversation.item.create",
  "conversation.item.truncate",
  "conversation.item.delete",
  "conversation.item.retrieve",
  "response.create",
  "response.cancel",
  "output_audio_buffer.clear",
]);

/** One scripted response. */
export type FakeResponse =
  | { kind: "call"; name: string; arguments: Record<string, unknown> }
  | {
      kind: "say";
      text: string;
      /** Length of the answer's audio (ms; default 600). */
      audioMs: number;
      /** Audio per delta (ms; default 100). */
      chunkMs: number;
      /** Wait between deltas (ms; default 0: as fast as it can). */
      paceMs: number;
      /** Never finish: the response stays open until the client cancels it. */
      hold: boolean;
      /** Audio arriving while it runs is speech over the answer (speech_started). */
      bargeIn: boolean;
    };

export const respond = {
  call: (name: string, args: Record<string, unknown>): FakeResponse => ({ kind: "call", name, arguments: args }),
  say: (text: string, options: Partial<Omit<Extract<FakeResponse, { kind: "say" }>, "kind" | "text">> = {}): FakeResponse => ({
    kind: "say",
    text,
    audioMs: options.audioMs ?? 600,
    chunkMs: options.chunkMs ?? 100,
    paceMs: options.paceMs ?? 0,
    hold: options.hold ?? false,
    bargeIn: options.bargeIn ?? false,
  }),
};

/** What happens after the owner's audio of one turn is committed. */
export interface FakeTurn {
  /** The transcript of the owner's words the fake sends back. */
  heard: string;
  /** The first answers the audio; each next one answers the function call outputs of the one before. */
  responses: FakeResponse[];
}

/** One client event as received, parsed. */
export interface ReceivedEvent {
  type: string;
  body: Record<string, unknown>;
  at: number;
}

/** One WebSocket session with the fake. */
export interface FakeSession {
  index: number;
  headers: Record<string, string>;
  model: string | null;
  events: ReceivedEvent[];
  /** Every appended byte of audio, in order. */
  audio(): Uint8Array;
  /** The merged session as the last update left it. */
  session: Record<string, unknown>;
  /** The session.update bodies, in order. */
  updates: Array<Record<string, unknown>>;
  /** Function call outputs received: call id, the tool's name, the output. */
  outputs: Array<{ callId: string; name: string; output: string }>;
  cancels: number;
  truncates: Array<{ itemId: string; audioEndMs: number; sentMs: number }>;
  /** Audio ms sent per answer item. */
  sentMs: Map<string, number>;
  closed: boolean;
  /** The responses it finished, with their status. */
  responses: Array<{ id: string; status: string }>;
  /** Close the connection from the server's side (an outage). */
  drop(code?: number): void;
}

interface Live {
  record: FakeSession;
  ws: ServerWebSocket<{ index: number }>;
  chunks: Uint8Array[];
  ready: boolean;
  /** Audio since the last commit (bytes): the buffer, and what counts as speech for the stand-in VAD. */
  buffered: number;
  bargeBytes: number;
  bargeSent: boolean;
  turn: FakeTurn | undefined;
  nextResponse: number;
  active: { id: string; cancel: () => void; bargeIn: boolean } | undefined;
  pendingCalls: Map<string, string>;
  lastItem: string | null;
}

export interface RealtimeFake {
  /** The provider's base_url (ends in /v1). */
  url: string;
  sessions: FakeSession[];
  /** Every problem found in what clients sent, across sessions ("session 0: …"). */
  violations: string[];
  /** Queue turns: each commit takes the next. */
  script(...turns: FakeTurn[]): void;
  /** The next `count` handshakes are answered with this HTTP status instead of a session. */
  refuse(status: number, count?: number): void;
  /** How much audio (ms) counts as speech for the stand-in voice detection (default 300). */
  vadMs: number;
  stop(): void;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** A tone: `ms` of a 440 Hz sine at a third of full scale, PCM16 mono at 24 kHz. */
export function tone(ms: number, offsetSamples = 0): Uint8Array {
  const samples = Math.round((ms * RATE) / 1000);
  const out = new Uint8Array(samples * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples; i++) view.setInt16(i * 2, Math.round(Math.sin(((i + offsetSamples) * 2 * Math.PI * 440) / RATE) * 10_000), true);
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Merge an update into the session, tables merged key by key (as the service applies a partial update). */
function merge(into: Record<string, unknown>, update: Record<string, unknown>): Record<string, unknown> {
  const out = { ...into };
  for (const [key, value] of Object.entries(update))
    out[key] = isObject(value) && isObject(out[key]) ? merge(out[key] as Record<string, unknown>, value) : value;
  return out;
}

/** What is wrong with a session.update's session, as the documentation describes one. */
function sessionProblems(session: unknown, first: boolean): string[] {
  if (!isObject(session)) return ["session.update without a session object"];
  const problems: string[] = [];
  if (session.type !== "realtime") problems.push(`session.type is ${JSON.stringify(session.type)}, not "realtime"`);
  if (first && (typeof session.instructions !== "string" || session.instructions.trim() === "")) problems.push("the first session.update has no instructions");
  if (session.instructions !== undefined && typeof session.instructions !== "string") problems.push("instructions is not a string");
  if (session.output_modalities !== undefined) {
    const m = session.output_modalities;
    if (!Array.isArray(m) || m.length !== 1 || !["audio", "text"].includes(m[0] as string)) problems.push('output_modalities must be ["audio"] or ["text"]');
  }
  const audio = session.audio;
  if (first && !isObject(audio)) problems.push("the first session.update has no audio settings");
  if (isObject(audio)) {
    const format = (f: unknown, where: string) => {
      if (f === undefined && !first) return;
      if (!isObject(f) || f.type !== "audio/pcm" || f.rate !== RATE)
        problems.push(`${where}.format must be {type:"audio/pcm", rate:24000}, not ${JSON.stringify(f)}`);
    };
    const input = audio.input;
    const output = audio.output;
    if (first && (!isObject(input) || !isObject(output))) problems.push("audio.input and audio.output are both needed");
    if (isObject(input)) {
      format(input.format, "audio.input");
      if ("turn_detection" in input) {
        const td = input.turn_detection;
        if (td !== null && (!isObject(td) || !["server_vad", "semantic_vad"].includes(td.type as string)))
          problems.push(`turn_detection ${JSON.stringify(td)}`);
      } else if (first) problems.push("audio.input.turn_detection is not said");
      if (input.transcription !== undefined && (!isObject(input.transcription) || typeof input.transcription.model !== "string"))
        problems.push("audio.input.transcription needs a model");
    }
    if (isObject(output)) {
      format(output.format, "audio.output");
      if (first && (typeof output.voice !== "string" || output.voice === "")) problems.push("audio.output.voice is not a voice name");
    }
  }
  if (session.tools !== undefined) {
    if (!Array.isArray(session.tools)) problems.push("tools is not a list");
    else
      for (const tool of session.tools) {
        if (!isObject(tool) || tool.type !== "function") {
          problems.push(`a tool that is not {type:"function"}: ${JSON.stringify(tool)?.slice(0, 80)}`);
          continue;
        }
        if (typeof tool.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) problems.push(`a tool name ${JSON.stringify(tool.name)}`);
        if (typeof tool.description !== "string") problems.push(`tool ${tool.name} has no description`);
        if (!isObject(tool.parameters) || tool.parameters.type !== "object") problems.push(`tool ${tool.name}'s parameters are not an object schema`);
      }
  }
  return problems;
}

export async function startRealtimeFake(options: { apiKey?: string } = {}): Promise<RealtimeFake> {
  const sessions: FakeSession[] = [];
  const violations: string[] = [];
  const turns: FakeTurn[] = [];
  let refusals: { status: number; count: number } | undefined;
  const lives = new Map<number, Live>();
  let ids = 0;
  const id = (prefix: string) => `${prefix}_${(++ids).toString().padStart(4, "0")}`;

  const send = (live: Live, event: Record<string, unknown>) => {
    if (!live.record.closed) live.ws.send(JSON.stringify({ event_id: id("event"), ...event }));
  };
  const violate = (live: Live, what: string): void => void violations.push(`session ${live.record.index}: ${what}`);

  /** The owner's audio of a turn is in: committed, transcribed; with server detection the response follows at once. */
  const commitTurn = (live: Live, auto: boolean) => {
    if (live.buffered === 0) {
      send(live, { type: "error", error: { type: "invalid_request_error", code: "input_audio_buffer_commit_empty", message: "buffer too small" } });
      return;
    }
    live.buffered = 0;
    const itemId = id("item");
    send(live, { type: "input_audio_buffer.committed", previous_item_id: live.lastItem, item_id: itemId });
    live.lastItem = itemId;
    live.turn = turns.shift();
    live.nextResponse = 0;
    if (!live.turn) return;
    send(live, { type: "conversation.item.input_audio_transcription.completed", item_id: itemId, content_index: 0, transcript: live.turn.heard });
    if (auto) startResponse(live);
  };

  const startResponse = (live: Live) => {
    const script = live.turn?.responses[live.nextResponse++];
    const responseId = id("resp");
    send(live, { type: "response.created", response: { id: responseId, object: "realtime.response", status: "in_progress", output: [] } });
    if (!script) {
      // Nothing scripted: an empty, finished response.
      send(live, { type: "response.done", response: { id: responseId, object: "realtime.response", status: "completed", output: [] } });
      live.record.responses.push({ id: responseId, status: "completed" });
      return;
    }
    const itemId = id("item");
    live.lastItem = itemId;
    const base = { response_id: responseId, item_id: itemId, output_index: 0 };
    if (script.kind === "call") {
      const callId = id("call");
      const args = JSON.stringify(script.arguments);
      const item = { id: itemId, object: "realtime.item", type: "function_call", status: "in_progress", call_id: callId, name: script.name, arguments: "" };
      send(live, { type: "response.output_item.added", response_id: responseId, output_index: 0, item });
      const half = Math.ceil(args.length / 2);
      send(live, { type: "response.function_call_arguments.delta", ...base, call_id: callId, delta: args.slice(0, half) });
      send(live, { type: "response.function_call_arguments.delta", ...base, call_id: callId, delta: args.slice(half) });
      send(live, { type: "response.function_call_arguments.done", ...base, call_id: callId, name: script.name, arguments: args });
      const done = { ...item, status: "completed", arguments: args };
      send(live, { type: "response.output_item.done", response_id: responseId, output_index: 0, item: done });
      live.pendingCalls.set(callId, script.name);
      send(live, { type: "response.done", response: { id: responseId, object: "realtime.response", status: "completed", output: [done] } });
      live.record.responses.push({ id: responseId, status: "completed" });
      return;
    }
    void speak(live, script, responseId, itemId);
  };

  const speak = async (live: Live, script: Extract<FakeResponse, { kind: "say" }>, responseId: string, itemId: string) => {
    const base = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
    const item = { id: itemId, object: "realtime.item", type: "message", role: "assistant", status: "in_progress", content: [] };
    let cancelled = false;
    let wake: () => void = () => {};
    live.active = {
      id: responseId,
      bargeIn: script.bargeIn,
      cancel: () => {
        cancelled = true;
        wake();
      },
    };
    live.bargeBytes = 0;
    live.bargeSent = false;
    send(live, { type: "response.output_item.added", response_id: responseId, output_index: 0, item });
    send(live, { type: "response.content_part.added", ...base, part: { type: "audio", transcript: "" } });
    const chunks = Math.max(1, Math.ceil(script.audioMs / script.chunkMs));
    const words = script.text.split(/(?<= )/);
    let said = 0;
    for (let i = 0; i < chunks && !cancelled && !live.record.closed; i++) {
      const ms = Math.min(script.chunkMs, script.audioMs - i * script.chunkMs);
      send(live, { type: "response.output_audio.delta", ...base, delta: b64(tone(ms, (i * script.chunkMs * RATE) / 1000)) });
      live.record.sentMs.set(itemId, (live.record.sentMs.get(itemId) ?? 0) + ms);
      const upTo = Math.round(((i + 1) / chunks) * words.length);
      const piece = words.slice(said, upTo).join("");
      said = upTo;
      if (piece) send(live, { type: "response.output_audio_transcript.delta", ...base, delta: piece });
      if (script.paceMs > 0) await new Promise<void>((resolve) => setTimeout(resolve, script.paceMs));
    }
    if (script.hold && !cancelled) await new Promise<void>((resolve) => (wake = resolve));
    if (live.record.closed) return;
    live.active = undefined;
    const status = cancelled ? "cancelled" : "completed";
    if (!cancelled) {
      send(live, { type: "response.output_audio.done", ...base });
      send(live, { type: "response.output_audio_transcript.done", ...base, transcript: script.text });
      send(live, { type: "response.content_part.done", ...base, part: { type: "audio", transcript: script.text } });
    }
    const finished = { ...item, status: cancelled ? "incomplete" : "completed", content: [{ type: "audio", transcript: script.text }] };
    send(live, { type: "response.output_item.done", response_id: responseId, output_index: 0, item: finished });
    send(live, { type: "response.done", response: { id: responseId, object: "realtime.response", status, output: [finished] } });
    live.record.responses.push({ id: responseId, status });
  };

  const serverVad = (live: Live) => {
    const td = (live.record.session.audio as { input?: { turn_detection?: unknown } } | undefined)?.input?.turn_detection;
    return isObject(td);
  };

  const onEvent = (live: Live, event: Record<string, unknown>) => {
    const type = event.type as string;
    switch (type) {
      case "session.update": {
        const problems = sessionProblems(event.session, live.record.updates.length === 0);
        for (const problem of problems) violate(live, problem);
        live.record.updates.push(event.session as Record<string, unknown>);
        live.record.session = merge(live.record.session, (event.session ?? {}) as Record<string, unknown>);
        live.ready = true;
        send(live, { type: "session.updated", session: live.record.session });
        return;
      }
      case "input_audio_buffer.append": {
        const audio = event.audio;
        if (typeof audio !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(audio) || audio.length % 4 !== 0)
          return violate(live, "an append whose audio is not base64");
        const bytes = Buffer.from(audio, "base64");
        if (bytes.byteLength === 0 || bytes.byteLength % 2 !== 0) return violate(live, `an append of ${bytes.byteLength} bytes: not whole PCM16 samples`);
        if (!live.ready) violate(live, "audio appended before the session was set up");
        live.chunks.push(new Uint8Array(bytes));
        if (live.active) {
          if (!live.active.bargeIn) return;
          live.bargeBytes += bytes.byteLength;
          if (!live.bargeSent && live.bargeBytes >= (fake.vadMs * RATE * 2) / 1000) {
            live.bargeSent = true;
            send(live, { type: "input_audio_buffer.speech_started", audio_start_ms: 0, item_id: id("item") });
          }
          return;
        }
        live.buffered += bytes.byteLength;
        if (serverVad(live) && live.buffered >= (fake.vadMs * RATE * 2) / 1000 && turns.length > 0) {
          send(live, { type: "input_audio_buffer.speech_started", audio_start_ms: 0, item_id: id("item") });
          send(live, { type: "input_audio_buffer.speech_stopped", audio_end_ms: fake.vadMs, item_id: id("item") });
          commitTurn(live, true);
        }
        return;
      }
      case "input_audio_buffer.commit":
        if (serverVad(live)) violate(live, "a commit while the server detects turns (the service commits by itself)");
        return commitTurn(live, false);
      case "response.create":
        if (live.active) return violate(live, "response.create while a response is in progress");
        return startResponse(live);
      case "response.cancel":
        live.record.cancels++;
        if (!live.active) return violate(live, "response.cancel with no response in progress");
        live.active.cancel();
        return;
      case "conversation.item.truncate": {
        const itemId = event.item_id as string;
        const sent = live.record.sentMs.get(itemId);
        const end = event.audio_end_ms;
        if (sent === undefined) return violate(live, `truncate of ${itemId}, not an audio item this session sent`);
        if (event.content_index !== 0) violate(live, "truncate with a content_index other than 0");
        if (typeof end !== "number" || !Number.isInteger(end) || end < 0 || end > sent) violate(live, `truncate to ${end} ms of an item of ${sent} ms`);
        live.record.truncates.push({ itemId, audioEndMs: end as number, sentMs: sent });
        return;
      }
      case "conversation.item.create": {
        const item = event.item as Record<string, unknown> | undefined;
        if (item?.type !== "function_call_output") return;
        const callId = item.call_id as string;
        const name = live.pendingCalls.get(callId);
        if (name === undefined) return violate(live, `a function call output for ${callId}, which is no open call`);
        if (typeof item.output !== "string") violate(live, "a function call output that is not a string");
        live.pendingCalls.delete(callId);
        live.record.outputs.push({ callId, name, output: String(item.output) });
        return;
      }
      default:
        if (!KNOWN_CLIENT_EVENTS.has(type)) violate(live, `an unknown client event ${JSON.stringify(type)}`);
    }
  };

  const server: Server<{ index: number }> = Bun.serve<{ index: number }>({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request, srv) {
      const url = new URL(request.url);
      if (url.pathname !== "/v1/realtime") return Response.json({ error: { message: "not found" } }, { status: 404 });
      if (refusals && refusals.count > 0) {
        refusals.count--;
        return Response.json({ error: { type: "invalid_request_error", code: "refused", message: "refused by the test" } }, { status: refusals.status });
      }
      if (options.apiKey && request.headers.get("authorization") !== `Bearer ${options.apiKey}`) {
        return Response.json({ error: { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided" } }, { status: 401 });
      }
      const index = sessions.length;
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => {
        headers[key] = value;
      });
      const chunks: Uint8Array[] = [];
      const record: FakeSession = {
        index,
        headers,
        model: url.searchParams.get("model"),
        events: [],
        audio: () => Buffer.concat(chunks),
        session: {},
        updates: [],
        outputs: [],
        cancels: 0,
        truncates: [],
        sentMs: new Map(),
        closed: false,
        responses: [],
        drop: (code = 1011) => lives.get(index)?.ws.close(code, "dropped by the test"),
      };
      sessions.push(record);
      // Set before the upgrade: Bun opens the socket (and calls open) inside upgrade().
      lives.set(index, {
        record,
        ws: undefined as unknown as ServerWebSocket<{ index: number }>,
        chunks,
        ready: false,
        buffered: 0,
        bargeBytes: 0,
        bargeSent: false,
        turn: undefined,
        nextResponse: 0,
        active: undefined,
        pendingCalls: new Map(),
        lastItem: null,
      });
      if (srv.upgrade(request, { data: { index } })) return undefined;
      lives.delete(index);
      sessions.pop();
      return new Response("upgrade required", { status: 426 });
    },
    websocket: {
      maxPayloadLength: 16 * 1024 * 1024,
      open(ws) {
        const live = lives.get(ws.data.index)!;
        live.ws = ws;
        send(live, { type: "session.created", session: { id: id("sess"), object: "realtime.session", type: "realtime", model: live.record.model } });
      },
      message(ws, message) {
        const live = lives.get(ws.data.index)!;
        let event: unknown;
        try {
          event = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
        } catch {
          violate(live, "a frame that is not JSON");
          return;
        }
        if (!isObject(event) || typeof event.type !== "string") {
          violate(live, "an event without a type");
          return;
        }
        live.record.events.push({ type: event.type, body: event, at: Date.now() });
        onEvent(live, event);
      },
      close(ws) {
        const live = lives.get(ws.data.index)!;
        live.record.closed = true;
        live.active?.cancel();
      },
    },
  });

  const fake: RealtimeFake = {
    url: `http://127.0.0.1:${server.port}/v1`,
    sessions,
    violations,
    vadMs: 300,
    script: (...more) => void turns.push(...more),
    refuse: (status, count = 1) => {
      refusals = { status, count };
    },
    stop: () => void server.stop(true),
  };
  return fake;
}
