/**
 * Raw ADTS AAC remuxed into M4A, proven valid by reading it back with an
 * independent implementation (mediabunny, a devDependency) and by walking its
 * boxes: the same frames in the same order, their sizes, the sampling rate and
 * channel count, and an mdat that is exactly the ADTS payloads without their
 * headers. Malformed or cut-off streams are refused with the offset and the
 * reason, never shortened into a valid-looking file.
 */
import { describe, expect, test } from "bun:test";
import { ADTS, BufferSource, EncodedPacketSink, Input, MP4 } from "mediabunny";
import { MalformedAdts, parseAdts } from "../../../src/agent/transcription/adts.ts";
import { adtsToM4a } from "../../../src/agent/transcription/m4a.ts";
import { adtsFrame } from "../../fakes/transcription.ts";

const FIXTURES = `${import.meta.dir}/fixtures`;
const fixture = async (name: string) => new Uint8Array(await Bun.file(`${FIXTURES}/${name}`).arrayBuffer());

/** Every packet of the primary audio track, as mediabunny reads the file (ADTS or MP4). */
async function readBack(bytes: Uint8Array, format: typeof ADTS | typeof MP4) {
  const input = new Input({ formats: [format], source: new BufferSource(bytes) });
  const track = await input.getPrimaryAudioTrack();
  if (!track) throw new Error("no audio track");
  const packets: Uint8Array[] = [];
  for await (const packet of new EncodedPacketSink(track).packets()) packets.push(packet.data);
  const config = await track.getDecoderConfig();
  return {
    format: (await input.getFormat()).name,
    codec: track.codec,
    sampleRate: track.sampleRate,
    channels: track.numberOfChannels,
    description: config?.description ? new Uint8Array(config.description as ArrayBuffer) : undefined,
    duration: await track.computeDuration(),
    packets,
  };
}

interface Box {
  type: string;
  start: number;
  end: number;
  body: Uint8Array;
}

/** The boxes directly inside `bytes` (32-bit sizes only, as the remuxer writes). */
function boxes(bytes: Uint8Array): Box[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Box[] = [];
  for (let at = 0; at < bytes.byteLength; ) {
    const size = view.getUint32(at);
    if (size < 8 || at + size > bytes.byteLength) throw new Error(`box at ${at} claims ${size} bytes`);
    out.push({ type: String.fromCharCode(...bytes.subarray(at + 4, at + 8)), start: at, end: at + size, body: bytes.subarray(at + 8, at + size) });
    at += size;
  }
  return out;
}

/** The box at a path of types (`moov/trak/mdia/minf/stbl/stsz`); a full box's version and flags are left in its body. */
function find(bytes: Uint8Array, path: string): Box {
  const [first, ...rest] = path.split("/");
  const box = boxes(bytes).find((b) => b.type === first);
  if (!box) throw new Error(`no ${first} box`);
  if (rest.length === 0) return box;
  // stsd's entries start after its version, flags and entry count.
  const skip = box.type === "stsd" ? 8 : box.type === "mp4a" ? 28 : 0;
  const inner = find(box.body.subarray(skip), rest.join("/"));
  const offset = box.start + 8 + skip;
  return { ...inner, start: inner.start + offset, end: inner.end + offset };
}

const STBL = "moov/trak/mdia/minf/stbl";
const u32At = (bytes: Uint8Array, at: number) => new DataView(bytes.buffer, bytes.byteOffset).getUint32(at);

describe("real encoder output (FFmpeg's AAC LC, see fixtures/README.md)", () => {
  test.each([
    // name, sampling rate, channels, frames (as ffprobe counts them), AudioSpecificConfig
    ["voice-440hz-mono-44k.aac", 44100, 1, 23, [0x12, 0x08]],
    ["voice-stereo-48k.aac", 48000, 2, 13, [0x11, 0x90]],
  ] as const)("%s: every frame, in order, in a valid M4A at %i Hz with %i channel(s)", async (name, rate, channels, frameCount, asc) => {
    const aac = await fixture(name);
    const m4a = adtsToM4a(aac);
    const remuxed = await readBack(m4a, MP4);
    // mediabunny's ADTS reader gives each whole frame: its 7-byte header (no CRC in these files), then the payload.
    const frames = (await readBack(aac, ADTS)).packets;
    expect(frames.every((f) => f[0] === 0xff && f[1] === 0xf1)).toBe(true);
    const original = { packets: frames.map((f) => f.subarray(7)) };

    expect(remuxed).toMatchObject({ format: "MP4", codec: "aac", sampleRate: rate, channels });
    expect(remuxed.description).toEqual(Uint8Array.from(asc));
    expect(remuxed.packets).toHaveLength(frameCount);
    expect(original.packets).toHaveLength(frameCount);
    expect(remuxed.packets.map((p) => p.byteLength)).toEqual(original.packets.map((p) => p.byteLength));
    expect(remuxed.packets).toEqual(original.packets);
    expect(remuxed.duration).toBeCloseTo((frameCount * 1024) / rate, 5);

    // The file itself: ftyp (M4A brand), moov, then mdat holding the payloads back to back, where stco says.
    expect(boxes(m4a).map((b) => b.type)).toEqual(["ftyp", "moov", "mdat"]);
    expect(String.fromCharCode(...find(m4a, "ftyp").body.subarray(0, 4))).toBe("M4A ");
    const mdat = find(m4a, "mdat");
    const payloads = Buffer.concat(original.packets);
    expect(Buffer.from(mdat.body).equals(payloads)).toBe(true);
    expect(aac.byteLength - mdat.body.byteLength).toBe(frameCount * 7);
    expect(u32At(find(m4a, `${STBL}/stco`).body, 8)).toBe(mdat.start + 8);
    const stsz = find(m4a, `${STBL}/stsz`).body;
    expect(u32At(stsz, 8)).toBe(frameCount);
    expect(Array.from({ length: frameCount }, (_, i) => u32At(stsz, 12 + i * 4))).toEqual(original.packets.map((p) => p.byteLength));
    const mp4a = find(m4a, `${STBL}/stsd/mp4a`).body;
    expect(new DataView(mp4a.buffer, mp4a.byteOffset).getUint16(16)).toBe(channels);
    expect(u32At(mp4a, 24) >>> 16).toBe(rate);
    expect(u32At(find(m4a, "moov/trak/mdia/mdhd").body, 12)).toBe(rate);
    expect(u32At(find(m4a, "moov/trak/mdia/mdhd").body, 16)).toBe(frameCount * 1024);
    expect(String.fromCharCode(...find(m4a, "moov/trak/mdia/hdlr").body.subarray(8, 12))).toBe("soun");
  });
});

describe("headers the fixtures do not have", () => {
  const payloads = [Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5), Uint8Array.of(6, 7, 8, 9)];

  test("frames with a CRC: the 9-byte header and its CRC are left out of each sample", async () => {
    const aac = Buffer.concat(payloads.map((p) => adtsFrame(p, { crc: true })));
    const remuxed = await readBack(adtsToM4a(aac), MP4);
    expect(remuxed.packets).toEqual(payloads);
  });

  test.each([
    // sampling index, rate, channel configuration, channels, profile (object type - 1)
    [0, 96000, 2, 2, 1],
    [3, 48000, 6, 6, 1],
    [8, 16000, 1, 1, 1],
    [11, 8000, 1, 1, 0],
    [12, 7350, 2, 2, 3],
    [4, 44100, 7, 8, 1],
  ])("sampling index %i (%i Hz), channel configuration %i (%i channels), profile %i", async (index, rate, config, channels, profile) => {
    const aac = Buffer.concat(payloads.map((p) => adtsFrame(p, { samplingIndex: index, channelConfig: config, profile })));
    const m4a = adtsToM4a(aac);
    const { format } = parseAdts(aac);
    expect(format).toEqual({ objectType: profile + 1, samplingIndex: index, sampleRate: rate, channelConfig: config, channels });
    const remuxed = await readBack(m4a, MP4);
    expect(remuxed).toMatchObject({ codec: "aac", sampleRate: rate, channels });
    expect(remuxed.packets).toEqual(payloads);
    const asc = remuxed.description!;
    expect([asc[0]! >> 3, ((asc[0]! & 7) << 1) | (asc[1]! >> 7), (asc[1]! >> 3) & 0x0f]).toEqual([profile + 1, index, config]);
  });

  test("an ID3v2 tag in front of the first frame is skipped", async () => {
    const tag = Uint8Array.of(0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 5);
    const aac = Buffer.concat([tag, ...payloads.map((p) => adtsFrame(p))]);
    expect((await readBack(adtsToM4a(aac), MP4)).packets).toEqual(payloads);
  });
});

describe("malformed streams are refused with where and why", () => {
  const frame = adtsFrame(Uint8Array.of(1, 2, 3, 4, 5, 6));
  const cases: Array<[string, () => Promise<Uint8Array> | Uint8Array, number, string]> = [
    ["nothing at all", () => new Uint8Array(), 0, "holds no frames"],
    ["text, not audio", () => new TextEncoder().encode("this is not a voice note"), 0, "no frame sync word"],
    ["an MP3 frame (layer bits set)", () => Uint8Array.of(0xff, 0xfb, 0x90, 0x64, 0, 0, 0, 0), 0, "layer field"],
    [
      "a stream cut off in the last frame",
      async () => (await fixture("voice-440hz-mono-44k.aac")).subarray(0, 2303),
      2196,
      "cut off: the frame is 108 bytes, 107 remain",
    ],
    ["a stream cut off in a header", () => Buffer.concat([frame, frame.subarray(0, 4)]), 13, "cut off in a frame header (4 of 7 bytes)"],
    ["junk between frames", () => Buffer.concat([frame, Uint8Array.of(0, 0, 0), frame]), 13, "no frame sync word"],
    ["junk after the last frame", () => Buffer.concat([frame, frame, Uint8Array.of(0)]), 26, "cut off in a frame header"],
    ["a format change part-way", () => Buffer.concat([frame, adtsFrame(Uint8Array.of(1), { channelConfig: 2 })]), 13, "frame 2 changes the format"],
    ["a reserved sampling index", () => adtsFrame(Uint8Array.of(1), { samplingIndex: 13 }), 0, "sampling frequency index 13 is reserved"],
    ["channel configuration 0", () => adtsFrame(Uint8Array.of(1), { channelConfig: 0 }), 0, "channel configuration 0"],
    ["several raw data blocks in a frame", () => adtsFrame(Uint8Array.of(1, 2), { rawBlocks: 2 }), 0, "frames of 2 raw data blocks are not supported"],
    ["a frame length shorter than its header", () => adtsFrame(Uint8Array.of(1, 2), { frameLength: 7 }), 0, "leaves no room for audio"],
  ];
  test.each(cases)("%s", async (_what, make, offset, reason) => {
    const bytes = await make();
    let thrown: unknown;
    try {
      adtsToM4a(bytes);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MalformedAdts);
    expect(thrown).toMatchObject({ offset });
    expect((thrown as MalformedAdts).message).toContain(reason);
  });
});
