/**
 * The system's audio tools for `fermix talk`: a recorder that writes the
 * microphone as raw PCM16 mono at 24 kHz to stdout, and a player that reads
 * the same from stdin. ALSA's `arecord`/`aplay` where present (Linux), else
 * SoX's `rec`/`play` (Linux and macOS). Nothing is converted on the way: the
 * tools are asked for the companion protocol's format.
 */
import { SAMPLE_RATE } from "../channels/realtime/pcm.ts";

export interface AudioTool {
  /** The program, as found on PATH. */
  program: string;
  args: string[];
}

const RATE = String(SAMPLE_RATE);
const ALSA = ["-q", "-t", "raw", "-f", "S16_LE", "-r", RATE, "-c", "1"];
const SOX = ["-q", "-t", "raw", "-b", "16", "-e", "signed-integer", "-L", "-c", "1", "-r", RATE, "-"];

/** The microphone reader, or undefined where neither arecord nor rec is on PATH. */
export function findRecorder(which: (name: string) => string | null = Bun.which): AudioTool | undefined {
  const alsa = which("arecord");
  if (alsa) return { program: alsa, args: ALSA };
  const sox = which("rec");
  return sox ? { program: sox, args: SOX } : undefined;
}

/** The speaker writer, or undefined where neither aplay nor play is on PATH. */
export function findPlayer(which: (name: string) => string | null = Bun.which): AudioTool | undefined {
  const alsa = which("aplay");
  if (alsa) return { program: alsa, args: ALSA };
  const sox = which("play");
  return sox ? { program: sox, args: SOX } : undefined;
}

export const NO_RECORDER = "fermix talk: no microphone recorder found (arecord or rec): install alsa-utils or sox, or give a recording with --input FILE.wav";
export const NO_PLAYER = "fermix talk: no audio player found (aplay or play): install alsa-utils or sox, or write the answer to --output FILE.wav";

/** A running player: feed it PCM; `cut` drops what it has not played yet (an interruption); `end` lets it finish. */
export class Speaker {
  private proc: ReturnType<typeof Bun.spawn> | undefined;

  constructor(private readonly tool: AudioTool) {}

  write(pcm: Uint8Array): void {
    this.proc ??= Bun.spawn([this.tool.program, ...this.tool.args], { stdin: "pipe", stdout: "ignore", stderr: "ignore" });
    const sink = this.proc.stdin as import("bun").FileSink;
    sink.write(pcm);
    void sink.flush();
  }

  /** Stop at once: the player and what it buffered go; the next answer starts a new one. */
  cut(): void {
    this.proc?.kill();
    this.proc = undefined;
  }

  /** Play what is queued to the end. */
  async end(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc) return;
    await (proc.stdin as import("bun").FileSink).end();
    await proc.exited;
  }
}
