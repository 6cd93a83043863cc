/**
 * The audio helpers: WAV files as `fermix talk` reads and writes them,
 * checked against an independent reader (mediabunny, a devDependency), and
 * the mixing and resampling a recording goes through on its way to 24 kHz.
 */
import { describe, expect, test } from "bun:test";
import { BufferSource, EncodedPacketSink, Input, WAVE } from "mediabunny";
import { bytesOf, level, pcmMs, pcmToWav, readWav, resample, samplesOf, WavError, wavToPcm } from "../../../src/channels/realtime/pcm.ts";

/** What mediabunny reads from a WAV file: its format and every byte of its audio. */
async function readBack(bytes: Uint8Array) {
  const input = new Input({ formats: [WAVE], source: new BufferSource(bytes) });
  const track = await input.getPrimaryAudioTrack();
  if (!track) throw new Error("no audio track");
  const packets: Uint8Array[] = [];
  for await (const packet of new EncodedPacketSink(track).packets()) packets.push(packet.data);
  return { codec: track.codec, rate: track.sampleRate, channels: track.numberOfChannels, pcm: Buffer.concat(packets) };
}

/** A WAV file written by hand: `rate`, `channels`, 16-bit PCM, with an optional extra chunk before the data and a data size. */
function wavFile(samples: number[], rate: number, channels: number, options: { extra?: boolean; dataSize?: number } = {}): Buffer {
  const data = bytesOf(Int16Array.from(samples));
  // An odd-sized chunk: its pad byte must be skipped too.
  const extra = options.extra ? Buffer.concat([Buffer.from("JUNK"), Buffer.from([3, 0, 0, 0]), Buffer.from("abc\0")]) : Buffer.alloc(0);
  const header = Buffer.alloc(36);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + extra.byteLength + data.byteLength, 4);
  header.write("WAVEfmt ", 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  const dataHeader = Buffer.alloc(8);
  dataHeader.write("data", 0);
  dataHeader.writeUInt32LE(options.dataSize ?? data.byteLength, 4);
  return Buffer.concat([header, extra, dataHeader, data]);
}

describe("WAV files", () => {
  test("what pcmToWav writes, another reader reads as the same 24 kHz mono PCM16", async () => {
    const pcm = bytesOf(Int16Array.from([0, 1000, -1000, 32767, -32768, 5]));
    const back = await readBack(pcmToWav(pcm));
    expect(back).toEqual({ codec: "pcm-s16", rate: 24_000, channels: 1, pcm: Buffer.from(pcm) });
  });

  test("readWav reads what another reader reads, past chunks it does not need", async () => {
    const file = wavFile([1, 2, 3, 4, -5, -6], 22_050, 2, { extra: true });
    const wav = readWav(file);
    const back = await readBack(file);
    expect({ rate: wav.rate, channels: wav.channels }).toEqual({ rate: back.rate, channels: back.channels });
    expect(Buffer.from(bytesOf(wav.samples))).toEqual(back.pcm);
  });

  test("a data size past the end of the file (a WAV streamed to stdout) means: to the end", () => {
    expect([...readWav(wavFile([7, 8, 9], 16_000, 1, { dataSize: 0x7ffff000 })).samples]).toEqual([7, 8, 9]);
  });

  test("what is not 16-bit PCM WAV is refused, saying what it is", () => {
    expect(() => readWav(Buffer.from("OggS not a wav at all"))).toThrow(new WavError("not a WAV file (no RIFF/WAVE header)"));
    const float = wavFile([1, 2], 8000, 1);
    float.writeUInt16LE(3, 20);
    expect(() => readWav(float)).toThrow("compressed or floating-point");
    const eight = wavFile([1, 2], 8000, 1);
    eight.writeUInt16LE(8, 34);
    expect(() => readWav(eight)).toThrow("8-bit audio; 16-bit PCM is needed");
    expect(() => readWav(Buffer.from("RIFF\0\0\0\0WAVE"))).toThrow("the WAV file has no audio data");
  });
});

describe("to the protocol's format", () => {
  test("stereo is mixed down and the rate brought to 24 kHz: a second of sound stays a second", () => {
    const second = Array.from({ length: 2 * 12_000 }, (_, i) => (i % 2 === 0 ? 1000 : 3000));
    const pcm = wavToPcm(wavFile(second, 12_000, 2));
    expect(pcmMs(pcm.byteLength)).toBe(1000);
    expect(new Set(samplesOf(pcm))).toEqual(new Set([2000]));
  });

  test("resampling keeps a ramp a ramp, end to end", () => {
    const ramp = Int16Array.from({ length: 101 }, (_, i) => i * 100);
    const up = resample(ramp, 100, 200);
    expect(up.length).toBe(202);
    expect(up[0]).toBe(0);
    expect(up[2]).toBe(100);
    expect(up[3]).toBe(150);
    expect(Math.max(...up)).toBe(10_000);
    expect(resample(ramp, 100, 100)).toEqual(ramp);
  });

  test("level: silence is 0, a full-scale square is 1", () => {
    expect(level(new Int16Array(10))).toBe(0);
    expect(level(Int16Array.from([-32768, -32768]))).toBe(1);
  });
});
