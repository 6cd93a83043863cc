/**
 * Raw ADTS AAC remuxed into an M4A file (an MP4 audio container, ISO/IEC
 * 14496-12 and -14), for a speech-to-text service that takes M4A but not raw
 * AAC (OpenAI's). Nothing is re-encoded: each ADTS frame's payload becomes one
 * sample, the header's format becomes the AudioSpecificConfig in the sample
 * entry. The file is laid out for reading from the start: ftyp, moov (one
 * audio track: mvhd, trak/tkhd, mdia/mdhd/hdlr/minf/smhd/dinf/stbl with
 * stsd→mp4a→esds, stts, stsc, stsz, stco), then mdat holding every sample
 * in order as one chunk.
 *
 * Loaded lazily (a dynamic import) by the backend that needs it, only when a
 * raw AAC recording is transcribed.
 */
import { type AdtsFormat, parseAdts, SAMPLES_PER_FRAME } from "./adts.ts";

export { MalformedAdts } from "./adts.ts";

/** The movie's timescale (ticks per second) for mvhd and tkhd; the track's own is its sampling rate. */
const MOVIE_TIMESCALE = 1000;

/** Remux raw ADTS AAC into M4A bytes. Throws MalformedAdts for anything that is not a well-formed stream. */
export function adtsToM4a(adts: Uint8Array): Uint8Array {
  const { format, frames } = parseAdts(adts);
  const sizes = frames.map((frame) => frame.byteLength);
  const payload = sizes.reduce((sum, size) => sum + size, 0);
  const ftyp = box("ftyp", ascii("M4A "), u32(0x200), ascii("M4A "), ascii("isom"), ascii("iso2"));
  // stco's offset depends on moov's size, which does not depend on the offset's value: build twice.
  const moovAt = (mdatOffset: number) => moov(format, sizes, payload, mdatOffset);
  const mdatOffset = ftyp.byteLength + moovAt(0).byteLength + 8;
  const total = mdatOffset + payload;
  if (total > 0xffff_ffff) throw new RangeError(`an M4A of ${total} bytes needs 64-bit offsets`);
  return concat([ftyp, moovAt(mdatOffset), u32(8 + payload), ascii("mdat"), ...frames]);
}

function moov(format: AdtsFormat, sizes: number[], payload: number, mdatOffset: number): Uint8Array {
  const samples = sizes.length * SAMPLES_PER_FRAME;
  const movieDuration = Math.round((samples * MOVIE_TIMESCALE) / format.sampleRate);
  const seconds = samples / format.sampleRate;
  const largest = sizes.reduce((most, size) => Math.max(most, size), 0);
  const esds = fullBox(
    "esds",
    0,
    0,
    descriptor(
      0x03, // ES_Descriptor
      u16(1), // ES_ID
      u8(0), // no stream dependence, URL or OCR stream
      descriptor(
        0x04, // DecoderConfigDescriptor
        u8(0x40), // objectTypeIndication: MPEG-4 Audio (ISO/IEC 14496-3)
        u8((0x05 << 2) | 1), // streamType audio, upStream 0, reserved 1
        u24(largest), // bufferSizeDB
        u32(Math.round((largest * 8 * format.sampleRate) / SAMPLES_PER_FRAME)), // maxBitrate
        u32(seconds > 0 ? Math.round((payload * 8) / seconds) : 0), // avgBitrate
        descriptor(0x05, audioSpecificConfig(format)), // DecoderSpecificInfo
      ),
      descriptor(0x06, u8(0x02)), // SLConfigDescriptor: predefined for MP4
    ),
  );
  const mp4a = box(
    "mp4a",
    zeros(6), // reserved
    u16(1), // data_reference_index
    zeros(8), // reserved
    u16(format.channels),
    u16(16), // samplesize
    zeros(4), // pre_defined, reserved
    u32(format.sampleRate <= 0xffff ? format.sampleRate * 0x10000 : 0), // 16.16; the esds carries rates above 65535
    esds,
  );
  const stbl = box(
    "stbl",
    fullBox("stsd", 0, 0, u32(1), mp4a),
    fullBox("stts", 0, 0, u32(1), u32(sizes.length), u32(SAMPLES_PER_FRAME)),
    fullBox("stsc", 0, 0, u32(1), u32(1), u32(sizes.length), u32(1)),
    fullBox("stsz", 0, 0, u32(0), u32(sizes.length), u32s(sizes)),
    fullBox("stco", 0, 0, u32(1), u32(mdatOffset)),
  );
  const minf = box(
    "minf",
    fullBox("smhd", 0, 0, u16(0), u16(0)), // balance, reserved
    box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1))), // flag 1: the media is in this file
    stbl,
  );
  const mdia = box(
    "mdia",
    fullBox("mdhd", 0, 0, u32(0), u32(0), u32(format.sampleRate), u32(samples), u16(0x55c4 /* "und" */), u16(0)),
    fullBox("hdlr", 0, 0, u32(0), ascii("soun"), zeros(12), ascii("SoundHandler\0")),
    minf,
  );
  const tkhd = fullBox(
    "tkhd",
    0,
    0x000003, // enabled, in movie
    u32(0), // creation_time
    u32(0), // modification_time
    u32(1), // track_ID
    u32(0), // reserved
    u32(movieDuration),
    zeros(8), // reserved
    u16(0), // layer
    u16(0), // alternate_group
    u16(0x0100), // volume 1.0
    u16(0), // reserved
    MATRIX,
    u32(0), // width
    u32(0), // height
  );
  const mvhd = fullBox(
    "mvhd",
    0,
    0,
    u32(0), // creation_time
    u32(0), // modification_time
    u32(MOVIE_TIMESCALE),
    u32(movieDuration),
    u32(0x00010000), // rate 1.0
    u16(0x0100), // volume 1.0
    zeros(10), // reserved
    MATRIX,
    zeros(24), // pre_defined
    u32(2), // next_track_ID
  );
  return box("moov", mvhd, box("trak", tkhd, mdia));
}

/** The two-byte AudioSpecificConfig: object type, sampling index, channel configuration, and a plain GASpecificConfig. */
export function audioSpecificConfig(format: AdtsFormat): Uint8Array {
  const bits = (format.objectType << 11) | (format.samplingIndex << 7) | (format.channelConfig << 3);
  return u16(bits);
}

/** The identity matrix of mvhd and tkhd. */
const MATRIX = concat([u32(0x00010000), u32(0), u32(0), u32(0), u32(0x00010000), u32(0), u32(0), u32(0), u32(0x40000000)]);

function box(type: string, ...parts: Uint8Array[]): Uint8Array {
  const body = concat(parts);
  return concat([u32(8 + body.byteLength), ascii(type), body]);
}

function fullBox(type: string, version: number, flags: number, ...parts: Uint8Array[]): Uint8Array {
  return box(type, u8(version), u24(flags), ...parts);
}

/** An MPEG-4 descriptor (ISO/IEC 14496-1 §8.3.3): tag, size in 7-bit groups, body. */
function descriptor(tag: number, ...parts: Uint8Array[]): Uint8Array {
  const body = concat(parts);
  const size: number[] = [body.byteLength & 0x7f];
  for (let rest = body.byteLength >> 7; rest > 0; rest >>= 7) size.unshift((rest & 0x7f) | 0x80);
  return concat([u8(tag), Uint8Array.from(size), body]);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

function u8(value: number): Uint8Array {
  return Uint8Array.of(value & 0xff);
}

function u16(value: number): Uint8Array {
  return Uint8Array.of((value >>> 8) & 0xff, value & 0xff);
}

function u24(value: number): Uint8Array {
  return Uint8Array.of((value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
}

function u32(value: number): Uint8Array {
  return Uint8Array.of((value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
}

/** Big-endian 32-bit values, one after another (stsz's table). */
function u32s(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  for (const [i, value] of values.entries()) view.setUint32(i * 4, value);
  return out;
}

function zeros(length: number): Uint8Array {
  return new Uint8Array(length);
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}
