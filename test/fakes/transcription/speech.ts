/**
 * Fake recordings for the speech-to-text fakes: a container's real magic
 * bytes (so a fake can tell an OGG from an MP4, as the services do by
 * sniffing) followed by the words "spoken" in it, which the fakes give back
 * as the transcript. `speech("buy milk", "ogg")` is a voice note saying so.
 * Raw AAC is a real ADTS stream — one frame whose payload carries the words —
 * since a client may remux it (the openai backend does, into M4A): the words
 * then reach the service inside the M4A's mdat.
 */

export type Container = "ogg" | "mp4" | "m4a" | "mp3" | "wav" | "webm" | "flac" | "aac";

const MAGIC: Record<Container, number[]> = {
  ogg: [...bytes("OggS"), 0, 2],
  // An ISO-BMFF `ftyp` box (size, type, major brand, minor version, compatible brands); the words follow in a `free` box.
  mp4: [0, 0, 0, 0x18, ...bytes("ftypisom"), 0, 0, 2, 0, ...bytes("isomiso2")],
  m4a: [0, 0, 0, 0x18, ...bytes("ftypM4A "), 0, 0, 2, 0, ...bytes("M4A isom")],
  mp3: [...bytes("ID3"), 4, 0],
  wav: [...bytes("RIFF"), 0x24, 0, 0, 0, ...bytes("WAVEfmt ")],
  webm: [0x1a, 0x45, 0xdf, 0xa3],
  flac: [...bytes("fLaC")],
  aac: [], // a whole ADTS frame around the words: see speech()
};

const MARK = "\u0000speech:";

/** A recording in `container` in which `words` are spoken. */
export function speech(words: string, container: Container = "ogg"): Uint8Array {
  const spoken = [...bytes(MARK), ...Buffer.from(words, "utf8")];
  // AAC LC, 44.1 kHz, mono: what Signal's voice notes are.
  if (container === "aac") return adtsFrame(Uint8Array.from(spoken));
  if (container === "mp4" || container === "m4a") return new Uint8Array([...MAGIC[container], ...u32(8 + spoken.length), ...bytes("free"), ...spoken]);
  return new Uint8Array([...MAGIC[container], ...spoken]);
}

export interface AdtsFrameOptions {
  /** ADTS profile: the MPEG-4 Audio Object Type - 1 (1, AAC LC, by default). */
  profile?: number;
  /** Sampling frequency index (4, 44.1 kHz, by default). */
  samplingIndex?: number;
  /** Channel configuration (1, mono, by default). */
  channelConfig?: number;
  /** With a CRC after the header (protection_absent 0): a 9-byte header. */
  crc?: boolean;
  /** number_of_raw_data_blocks_in_frame + 1 (1 by default). */
  rawBlocks?: number;
  /** The frame_length field, when it should lie (default: the real length). */
  frameLength?: number;
}

/** One ADTS frame (ISO/IEC 14496-3 §1.A.2.2) carrying `payload` as its raw data block. */
export function adtsFrame(payload: Uint8Array, options: AdtsFrameOptions = {}): Uint8Array {
  const { profile = 1, samplingIndex = 4, channelConfig = 1, crc = false, rawBlocks = 1 } = options;
  const headerLength = crc ? 9 : 7;
  const length = options.frameLength ?? headerLength + payload.byteLength;
  if (length > 0x1fff) throw new RangeError(`an ADTS frame holds at most ${0x1fff} bytes, not ${length}`);
  const header = [
    0xff,
    0xf0 | (crc ? 0 : 1), // sync, MPEG-4, layer 0, protection_absent
    (profile << 6) | (samplingIndex << 2) | (channelConfig >> 2),
    ((channelConfig & 3) << 6) | ((length >> 11) & 3),
    (length >> 3) & 0xff,
    ((length & 7) << 5) | 0x1f, // buffer fullness 0x7FF: variable bit rate
    0xfc | (rawBlocks - 1),
  ];
  if (crc) header.push(0x12, 0x34); // not checked by readers that only remux
  return new Uint8Array([...header, ...payload]);
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

/**
 * Whether an MP4 file's top-level boxes (ISO/IEC 14496-12 §4.2: 32-bit size,
 * 1 for a 64-bit size after the type, 0 for "to the end") lie end to end and
 * end exactly where the file does: a box that claims more bytes than there
 * are, or bytes after the last box, is a corrupted file.
 */
export function boxesTile(data: Uint8Array): boolean {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  while (at < data.byteLength) {
    if (data.byteLength - at < 8) return false;
    let size = view.getUint32(at);
    if (size === 1) {
      if (data.byteLength - at < 16) return false;
      size = Number(view.getBigUint64(at + 8));
    } else if (size === 0) size = data.byteLength - at;
    if (size < 8 || at + size > data.byteLength) return false;
    at += size;
  }
  return at === data.byteLength;
}

/** The words spoken in a fake recording ("" when it has none: silence). */
export function wordsOf(data: Uint8Array): string {
  const text = Buffer.from(data).toString("latin1");
  const at = text.indexOf(MARK);
  return at < 0 ? "" : Buffer.from(data.subarray(at + MARK.length)).toString("utf8");
}

function u32(value: number): number[] {
  return [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
}

function bytes(text: string): number[] {
  return [...Buffer.from(text, "latin1")];
}
