/**
 * A voice note's bytes come from the network: whatever they are, the ADTS →
 * M4A remuxer gives a well-formed M4A holding exactly the stream's frames, or
 * a MalformedAdts — never another exception, never a file missing audio.
 */
import { expect, test } from "bun:test";
import { BufferSource, EncodedPacketSink, Input, MP4 } from "mediabunny";
import { MalformedAdts, parseAdts } from "../../../src/agent/transcription/adts.ts";
import { adtsToM4a } from "../../../src/agent/transcription/m4a.ts";
import { adtsFrame, boxesTile } from "../../fakes/transcription.ts";
import { mutateBinary, type Rng, rng } from "../../helpers/fuzz.ts";

const FIXTURE = new Uint8Array(await Bun.file(`${import.meta.dir}/fixtures/voice-440hz-mono-44k.aac`).arrayBuffer());

/** The remuxer's answer for `input`, checked: a MalformedAdts (false), or an M4A whose mdat is every frame's payload (true). */
function check(input: Uint8Array, label: string): Uint8Array | false {
  let m4a: Uint8Array;
  try {
    m4a = adtsToM4a(input);
  } catch (error) {
    if (error instanceof MalformedAdts) return false;
    throw new Error(`${label}: ${String(error)}`);
  }
  const { frames } = parseAdts(input);
  expect(boxesTile(m4a)).toBe(true);
  const payload = Buffer.concat(frames);
  expect(Buffer.from(m4a.subarray(m4a.byteLength - payload.byteLength)).equals(payload)).toBe(true);
  return m4a;
}

async function packetCount(m4a: Uint8Array): Promise<number> {
  const track = await new Input({ formats: [MP4], source: new BufferSource(m4a) }).getPrimaryAudioTrack();
  let count = 0;
  for await (const _ of new EncodedPacketSink(track!).packets()) count++;
  return count;
}

test("a real voice note, corrupted: a complete M4A or a MalformedAdts", async () => {
  const r = rng(1414);
  let remuxed = 0;
  for (let i = 0; i < 1500; i++) {
    const input = mutateBinary(r, FIXTURE);
    const m4a = check(input, `case ${i}`);
    if (!m4a) continue;
    remuxed++;
    if (remuxed % 20 === 1) expect(await packetCount(m4a)).toBe(parseAdts(input).frames.length);
  }
  // Some corruptions (a flipped bit inside audio data) leave the framing whole: those must still remux.
  expect(remuxed).toBeGreaterThan(0);
});

/** A random ADTS-like stream: frames with random (sometimes invalid) header fields and payloads, sometimes junk. */
function randomStream(r: Rng): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let n = r.int(0, 6); n > 0; n--) {
    if (r.next() < 0.1) {
      parts.push(r.bytes(r.int(1, 12)));
      continue;
    }
    const payload = r.bytes(r.int(0, 40));
    const frame = adtsFrame(payload, {
      profile: r.int(0, 3),
      samplingIndex: r.next() < 0.8 ? 4 : r.int(0, 15),
      channelConfig: r.next() < 0.8 ? 1 : r.int(0, 7),
      crc: r.next() < 0.3,
      rawBlocks: r.next() < 0.9 ? 1 : r.int(1, 4),
      ...(r.next() < 0.1 ? { frameLength: r.int(0, 0x1fff) } : {}),
    });
    parts.push(frame);
  }
  return Buffer.concat(parts);
}

test("random frames and junk: a complete M4A or a MalformedAdts", () => {
  const r = rng(4141);
  for (let i = 0; i < 3000; i++) check(randomStream(r), `case ${i}`);
  for (let i = 0; i < 500; i++) check(r.bytes(r.int(0, 64)), `random bytes ${i}`);
});
