/**
 * Raw AAC as Signal sends voice notes: a stream of ADTS frames (ISO/IEC
 * 13818-7 / 14496-3 §1.A.2), each a 7-byte header (9 with a CRC) followed by
 * one raw AAC data block. This reads the stream into what an MP4 container
 * needs — the format (object type, sampling rate, channels) and each frame's
 * payload — without decoding anything. It is strict: a stream that is cut
 * off, has bytes between frames or changes format part-way is refused with
 * the offset and the reason, never silently shortened.
 */

/** The sampling rates an ADTS header's 4-bit index names (13–15 are not rates). */
export const SAMPLING_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350] as const;

/** The stream's format, the same in every frame. */
export interface AdtsFormat {
  /** MPEG-4 Audio Object Type: the ADTS profile + 1 (2 is AAC LC). */
  objectType: number;
  samplingIndex: number;
  sampleRate: number;
  /** 1–7 (channel configuration 0, a format carried in the stream itself, is not supported). */
  channelConfig: number;
  /** The channel count the configuration means (7 is 7.1: eight channels). */
  channels: number;
}

export interface AdtsStream {
  format: AdtsFormat;
  /** Each frame's raw AAC data block, header and CRC removed: views into the input. */
  frames: Uint8Array[];
}

/** The bytes are not a well-formed ADTS stream: `offset` is where reading stopped. */
export class MalformedAdts extends Error {
  override name = "MalformedAdts";
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(`not a well-formed ADTS AAC stream at byte ${offset}: ${reason}`);
  }
}

/** Samples per AAC frame (an ADTS frame with one raw data block, no 960-sample variant). */
export const SAMPLES_PER_FRAME = 1024;

const HEADER = 7;
const CRC = 2;

/** Read an ADTS stream (an ID3v2 tag in front is skipped). Throws MalformedAdts. */
export function parseAdts(bytes: Uint8Array): AdtsStream {
  let at = id3Length(bytes);
  let format: AdtsFormat | undefined;
  const frames: Uint8Array[] = [];
  while (at < bytes.byteLength) {
    const frame = readFrame(bytes, at);
    if (!format) format = frame.format;
    else if (!sameFormat(format, frame.format))
      throw new MalformedAdts(at, `frame ${frames.length + 1} changes the format (${describe(format)} → ${describe(frame.format)})`);
    frames.push(bytes.subarray(at + frame.headerLength, at + frame.frameLength));
    at += frame.frameLength;
  }
  if (!format) throw new MalformedAdts(at, "it holds no frames");
  return { format, frames };
}

interface Frame {
  format: AdtsFormat;
  headerLength: number;
  frameLength: number;
}

function readFrame(bytes: Uint8Array, at: number): Frame {
  const left = bytes.byteLength - at;
  if (left < HEADER) throw new MalformedAdts(at, `the stream is cut off in a frame header (${left} of ${HEADER} bytes)`);
  const b = (i: number) => bytes[at + i] ?? 0;
  if (b(0) !== 0xff || (b(1) & 0xf0) !== 0xf0) throw new MalformedAdts(at, "no frame sync word where a frame should start");
  if ((b(1) & 0x06) !== 0) throw new MalformedAdts(at, "the layer field is not 0");
  const protectionAbsent = (b(1) & 0x01) === 1;
  const profile = b(2) >> 6;
  const samplingIndex = (b(2) >> 2) & 0x0f;
  const channelConfig = ((b(2) & 0x01) << 2) | (b(3) >> 6);
  const frameLength = ((b(3) & 0x03) << 11) | (b(4) << 3) | (b(5) >> 5);
  const rawBlocks = (b(6) & 0x03) + 1;
  const sampleRate = SAMPLING_RATES[samplingIndex];
  if (sampleRate === undefined) throw new MalformedAdts(at, `sampling frequency index ${samplingIndex} is reserved`);
  if (channelConfig === 0) throw new MalformedAdts(at, "channel configuration 0 (a format inside the stream) is not supported");
  if (rawBlocks !== 1) throw new MalformedAdts(at, `frames of ${rawBlocks} raw data blocks are not supported`);
  const headerLength = protectionAbsent ? HEADER : HEADER + CRC;
  if (frameLength <= headerLength) throw new MalformedAdts(at, `the frame length ${frameLength} leaves no room for audio`);
  if (frameLength > left) throw new MalformedAdts(at, `the stream is cut off: the frame is ${frameLength} bytes, ${left} remain`);
  const channels = channelConfig === 7 ? 8 : channelConfig;
  return { format: { objectType: profile + 1, samplingIndex, sampleRate, channelConfig, channels }, headerLength, frameLength };
}

/** The length of an ID3v2 tag at the start (some encoders write one before the first frame), else 0. */
function id3Length(bytes: Uint8Array): number {
  if (bytes.byteLength < 10 || bytes[0] !== 0x49 || bytes[1] !== 0x44 || bytes[2] !== 0x33) return 0;
  const size = bytes.subarray(6, 10);
  if (size.some((byte) => byte > 0x7f)) return 0;
  const footer = ((bytes[5] ?? 0) & 0x10) !== 0 ? 10 : 0;
  return 10 + footer + (((size[0] ?? 0) << 21) | ((size[1] ?? 0) << 14) | ((size[2] ?? 0) << 7) | (size[3] ?? 0));
}

function sameFormat(a: AdtsFormat, b: AdtsFormat): boolean {
  return a.objectType === b.objectType && a.samplingIndex === b.samplingIndex && a.channelConfig === b.channelConfig;
}

function describe(format: AdtsFormat): string {
  return `object type ${format.objectType}, ${format.sampleRate} Hz, ${format.channels} channel(s)`;
}
