/**
 * Fake recordings for the speech-to-text fakes: a container's real magic
 * bytes (so a fake can tell an OGG from an MP4, as the services do by
 * sniffing) followed by the words "spoken" in it, which the fakes give back
 * as the transcript. `speech("buy milk", "ogg")` is a voice note saying so.
 */

export type Container = "ogg" | "mp4" | "m4a" | "mp3" | "wav" | "webm" | "flac" | "aac";

const MAGIC: Record<Container, number[]> = {
  ogg: [...bytes("OggS"), 0, 2],
  // An ISO-BMFF `ftyp` box: size, type, major brand.
  mp4: [0, 0, 0, 0x18, ...bytes("ftypisom")],
  m4a: [0, 0, 0, 0x18, ...bytes("ftypM4A ")],
  mp3: [...bytes("ID3"), 4, 0],
  wav: [...bytes("RIFF"), 0x24, 0, 0, 0, ...bytes("WAVEfmt ")],
  webm: [0x1a, 0x45, 0xdf, 0xa3],
  flac: [...bytes("fLaC")],
  // An ADTS frame header (MPEG-4 AAC LC, 44.1 kHz, mono): what Signal's voice notes are.
  aac: [0xff, 0xf1, 0x50, 0x40],
};

const MARK = "\u0000speech:";

/** A recording in `container` in which `words` are spoken. */
export function speech(words: string, container: Container = "ogg"): Uint8Array {
  return new Uint8Array([...MAGIC[container], ...bytes(MARK), ...bytes(words)]);
}

/** The container a recording's bytes are, by their magic; undefined for anything else. */
export function sniff(data: Uint8Array): Container | undefined {
  const head = Buffer.from(data.subarray(0, 16));
  if (head.subarray(0, 4).toString("latin1") === "OggS") return "ogg";
  if (head.subarray(4, 8).toString("latin1") === "ftyp") return head.subarray(8, 11).toString("latin1") === "M4A" ? "m4a" : "mp4";
  if (head.subarray(0, 3).toString("latin1") === "ID3") return "mp3";
  if (head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WAVE") return "wav";
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return "webm";
  if (head.subarray(0, 4).toString("latin1") === "fLaC") return "flac";
  if (head[0] === 0xff && ((head[1] ?? 0) & 0xf6) === 0xf0) return "aac";
  return undefined;
}

/** The words spoken in a fake recording ("" when it has none: silence). */
export function wordsOf(data: Uint8Array): string {
  const text = Buffer.from(data).toString("latin1");
  const at = text.indexOf(MARK);
  return at < 0 ? "" : Buffer.from(data.subarray(at + MARK.length)).toString("utf8");
}

function bytes(text: string): number[] {
  return [...Buffer.from(text, "latin1")];
}
