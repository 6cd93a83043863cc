/**
 * `fermix talk`: a live voice conversation with the assistant from the
 * terminal, through the running daemon's companion socket
 * (`<home>/realtime.sock`, docs/realtime.md). The microphone goes up and the
 * answer comes back through the system's audio tools (talk-audio.ts), with
 * the transcript of both sides on stdout; Ctrl-C ends it.
 *
 * `--input FILE.wav` speaks a recording instead of the microphone (any PCM16
 * WAV; mixed down and resampled to the protocol's 24 kHz), and the command
 * ends by itself once the answer to it has been spoken. `--output FILE.wav`
 * writes the answer there instead of playing it. With both, no audio tool
 * is needed: it can be scripted.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { Socket } from "bun";
import { LineDecoder } from "../channels/lines.ts";
import { BYTES_PER_SAMPLE, pcmMs, pcmToWav, SAMPLE_RATE, WavError, wavToPcm } from "../channels/realtime/pcm.ts";
import { type CompanionEvent, type CompanionRequest, encodeEvent } from "../channels/realtime/protocol.ts";
import { pathsFor, resolveHome } from "../config/paths.ts";
import { describeError } from "../kernel/errors.ts";
import { drainPending, lineWriter, type Writer } from "../kernel/unix-socket.ts";
import { type CliContext, UsageError } from "./context.ts";
import { findPlayer, findRecorder, NO_PLAYER, NO_RECORDER, Speaker } from "./talk-audio.ts";

export const TALK_USAGE = `Usage: fermix talk [--input FILE.wav] [--output FILE.wav] [--push-to-talk]

Talk with the assistant live, by voice, through the running daemon
(\`fermix run\` with [fermix_core.realtime] enabled = true). Your words and
its answers are printed as they are spoken, and kept in the voice
conversation's history. Ctrl-C ends the session.

The microphone is read with arecord (alsa-utils) or rec (sox), the answer
played with aplay or play. Hands-free: the assistant answers when you pause,
and you can speak over it to cut it off.

Options:
  --input FILE.wav    speak this recording (16-bit PCM WAV, any rate) instead
                      of the microphone; ends once the answer has been spoken
  --output FILE.wav   write the answer (PCM16, mono, 24 kHz) instead of playing it
  --push-to-talk      no voice detection: the recording (or Enter, live) ends your turn`;

/** How much audio goes up per frame when a recording is sent (ms): small frames, as a microphone would send. */
const FRAME_MS = 100;
const FRAME_BYTES = (SAMPLE_RATE * BYTES_PER_SAMPLE * FRAME_MS) / 1000;

export interface TalkArgs {
  input?: string;
  output?: string;
  pushToTalk: boolean;
}

export function parseTalkArgs(args: readonly string[]): TalkArgs {
  const parsed: TalkArgs = { pushToTalk: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^--(input|output)(?:=(.*))?$/s.exec(arg);
    if (match) {
      const value = match[2] ?? args[++i];
      if (value === undefined || value === "") throw new UsageError(`--${match[1]} needs a file name`);
      parsed[match[1] as "input" | "output"] = value;
      continue;
    }
    if (arg === "--push-to-talk") {
      parsed.pushToTalk = true;
      continue;
    }
    throw new UsageError(`unexpected argument "${arg}"`);
  }
  return parsed;
}

/** The transcript as it is spoken: the owner's words when known, the assistant's as they come. */
class Transcript {
  private open: string | undefined;

  constructor(private readonly out: (text: string) => void) {}

  show(event: Extract<CompanionEvent, { type: "transcript" }>): void {
    if (event.role === "user") {
      if (event.final && event.text) this.line(`You: ${event.text}`);
      return;
    }
    if (!event.final) {
      if (this.open !== event.item_id) {
        this.close();
        this.out("Fermix: ");
        this.open = event.item_id;
      }
      this.out(event.delta ?? "");
      return;
    }
    if (this.open === event.item_id) {
      this.out("\n");
      this.open = undefined;
    } else if (event.text) this.line(`Fermix: ${event.text}`);
  }

  line(text: string): void {
    this.close();
    this.out(`${text}\n`);
  }

  close(): void {
    if (this.open === undefined) return;
    this.out("\n");
    this.open = undefined;
  }
}

export async function main(args: string[], ctx: CliContext): Promise<number> {
  const options = parseTalkArgs(args);
  const recorder = options.input ? undefined : findRecorder();
  if (!options.input && !recorder) {
    ctx.stderr(`${NO_RECORDER}\n`);
    return 1;
  }
  const player = options.output ? undefined : findPlayer();
  if (!options.output && !player) {
    ctx.stderr(`${NO_PLAYER}\n`);
    return 1;
  }
  let recording: Uint8Array | undefined;
  if (options.input) {
    try {
      recording = wavToPcm(readFileSync(options.input));
    } catch (error) {
      ctx.stderr(`fermix talk: cannot use ${options.input}: ${error instanceof WavError ? error.message : describeError(error)}\n`);
      return 1;
    }
  }

  const socketPath = pathsFor(resolveHome(ctx.env)).realtimeSocket;
  const transcript = new Transcript(ctx.stdout);
  const speaker = player ? new Speaker(player) : undefined;
  const answer: Uint8Array[] = [];
  let mic: ReturnType<typeof Bun.spawn> | undefined;
  let settle: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (settle = resolve));
  let finished = false;
  const finish = (code: number) => {
    if (finished) return;
    finished = true;
    settle(code);
  };

  let socket: Socket<undefined>;
  const decoder = new LineDecoder();
  // A recording goes up faster than the socket drains: what the kernel does not take waits for `drain`, in order.
  const pending = { queue: [] as Uint8Array[] };
  let write: Writer = () => {};
  const send = (request: CompanionRequest) => write(encodeEvent(request));
  const onEvent = (event: CompanionEvent) => {
    switch (event.type) {
      case "hello":
        if (!event.enabled) {
          ctx.stderr("fermix talk: realtime voice is off: set [fermix_core.realtime] enabled = true (fermix setup offers it)\n");
          return finish(1);
        }
        send({ type: "start", turn_detection: options.input || options.pushToTalk ? "manual" : "server", client: "fermix talk" });
        return;
      case "ready":
        ctx.stderr(`Talking with Fermix (${event.model}, voice ${event.voice}). ${recording ? "" : "Speak; Ctrl-C ends."}\n`);
        if (recording) {
          for (let at = 0; at < recording.byteLength; at += FRAME_BYTES) {
            send({ type: "audio", audio: Buffer.from(recording.subarray(at, at + FRAME_BYTES)).toString("base64") });
          }
          send({ type: "commit" });
          ctx.stderr(`(sent ${(pcmMs(recording.byteLength) / 1000).toFixed(1)} s of ${options.input})\n`);
        } else if (recorder) mic = startMicrophone(recorder.program, recorder.args, send, options.pushToTalk, ctx);
        return;
      case "audio": {
        const pcm = Buffer.from(event.audio, "base64");
        if (speaker) speaker.write(pcm);
        else answer.push(pcm);
        return;
      }
      case "transcript":
        return transcript.show(event);
      case "interrupted":
        speaker?.cut();
        return;
      case "tool":
        if (event.state === "running") transcript.line(`(using ${event.name}…)`);
        return;
      case "notice":
        transcript.line(event.text);
        return;
      case "response_done":
        // A recording is one question: its answer spoken, the command is done.
        if (recording) finish(event.status === "failed" ? 1 : 0);
        return;
      case "error":
        transcript.line(`fermix talk: ${event.message}`);
        if (event.code === "busy" || event.code === "disabled" || event.code === "upstream_refused") finish(1);
        return;
      case "ended":
        transcript.line(event.message);
        finish(event.reason === "stopped" ? 0 : 1);
        return;
      case "speech_started":
      case "speech_stopped":
        return;
    }
  };

  try {
    socket = await Bun.connect({
      unix: socketPath,
      socket: {
        data(_socket, chunk) {
          for (const line of decoder.push(chunk)) {
            if (typeof line !== "string") continue;
            try {
              onEvent(JSON.parse(line) as CompanionEvent);
            } catch (error) {
              ctx.stderr(`fermix talk: ${describeError(error)}\n`);
            }
          }
        },
        drain(socket) {
          drainPending(socket, pending);
        },
        close() {
          if (!finished) ctx.stderr("fermix talk: the daemon closed the connection\n");
          finish(1);
        },
        error(_socket, error) {
          ctx.stderr(`fermix talk: ${error.message}\n`);
        },
      },
    });
  } catch {
    ctx.stderr(
      "fermix talk: realtime voice is not listening: start the daemon with `fermix run`, with [fermix_core.realtime] enabled = true (fermix setup offers it)\n",
    );
    return 1;
  }
  write = lineWriter(socket, pending);

  // Ctrl-C: the normal way to end a live session.
  const onAbort = () => {
    send({ type: "stop" });
    finish(0);
  };
  ctx.shutdown.addEventListener("abort", onAbort, { once: true });
  const code = await done;
  ctx.shutdown.removeEventListener("abort", onAbort);
  transcript.close();
  mic?.kill();
  socket.end();
  if (options.output) {
    const pcm = Buffer.concat(answer);
    writeFileSync(options.output, pcmToWav(pcm));
    ctx.stderr(`(wrote ${(pcmMs(pcm.byteLength) / 1000).toFixed(1)} s of answer to ${options.output})\n`);
  }
  if (speaker) await (code === 0 && recording ? speaker.end() : Promise.resolve(speaker.cut()));
  return code;
}

/** Read the microphone through `program` and send it up as it comes; in push-to-talk, Enter ends each turn. */
function startMicrophone(
  program: string,
  args: string[],
  send: (request: CompanionRequest) => void,
  pushToTalk: boolean,
  ctx: CliContext,
): ReturnType<typeof Bun.spawn> {
  const proc = Bun.spawn([program, ...args], { stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  void (async () => {
    let carry = new Uint8Array(0);
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      // Whole samples only: a read may end between the two bytes of one.
      const bytes = carry.byteLength > 0 ? Buffer.concat([carry, chunk]) : chunk;
      const whole = bytes.byteLength - (bytes.byteLength % 2);
      carry = bytes.slice(whole);
      for (let at = 0; at < whole; at += FRAME_BYTES) {
        send({ type: "audio", audio: Buffer.from(bytes.subarray(at, Math.min(whole, at + FRAME_BYTES))).toString("base64") });
      }
    }
  })().catch((error) => ctx.stderr(`fermix talk: the microphone stopped: ${describeError(error)}\n`));
  if (pushToTalk) {
    const { input } = ctx.terminal();
    ctx.stderr("Push to talk: speak, then press Enter to send.\n");
    input.on("data", (data: Buffer) => {
      if (data.includes(10) || data.includes(13)) send({ type: "commit" });
    });
  }
  return proc;
}
