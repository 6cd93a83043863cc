/** The name and type a recording is uploaded under: the container it really is, from what the platform said. */
import { describe, expect, test } from "bun:test";
import { isRawAac } from "../../../src/agent/transcription/audio.ts";
import { uploadName } from "../../../src/agent/transcription/index.ts";
import { rng } from "../../helpers/fuzz.ts";

describe("uploadName", () => {
  test.each([
    ["Telegram voice note", { mime: "audio/ogg" }, "voice-note.ogg", "audio/ogg"],
    ["WhatsApp voice note", { mime: "audio/ogg; codecs=opus" }, "voice-note.ogg", "audio/ogg"],
    ["Telegram round video note", { mime: "video/mp4" }, "video-note.mp4", "video/mp4"],
    ["Telegram audio file", { mime: "audio/mpeg", filename: "song.mp3" }, "song.mp3", "audio/mpeg"],
    ["an audio-MIME document", { mime: "audio/mp4", filename: "memo.m4a" }, "memo.m4a", "audio/mp4"],
    ["Slack audio clip", { mime: "audio/x-m4a", filename: "Recording 3.m4a" }, "Recording 3.m4a", "audio/mp4"],
    ["a WAV", { mime: "audio/x-wav", filename: "take.wav" }, "take.wav", "audio/wav"],
    ["a name that disagrees with the type", { mime: "audio/ogg", filename: "memo.oga" }, "memo.ogg", "audio/ogg"],
    ["only the file name to go by", { mime: "application/octet-stream", filename: "rec.wav" }, "rec.wav", "audio/wav"],
    ["MIME in capitals", { mime: "Audio/MPEG" }, "voice-note.mp3", "audio/mpeg"],
    ["a path in the name", { mime: "audio/ogg", filename: "../../etc/passwd.ogg" }, "passwd.ogg", "audio/ogg"],
    ["quotes in the name", { mime: "audio/mpeg", filename: 'a"b;c.mp3' }, "a_b_c.mp3", "audio/mpeg"],
    ["unknown type, no name", { mime: "audio/x-unknown" }, "audio", "audio/x-unknown"],
  ])("%s", (_what, input, filename, mime) => {
    expect(uploadName(input)).toEqual({ filename, mime });
  });

  test("fuzzed platform names and types never throw and always give a header-safe name", () => {
    const r = rng(1414);
    const pieces = ["audio/", "ogg", ";", '"', "\r\n", "../", ".", "\u0000", "é", "mp3", " ", "video/mp4", "\\", "x".repeat(300)];
    for (let i = 0; i < 2000; i++) {
      const make = () => Array.from({ length: r.int(0, 6) }, () => (r.next() < 0.7 ? r.pick(pieces) : r.string(r.int(0, 5)))).join("");
      const input = r.next() < 0.5 ? { mime: make() } : { mime: make(), filename: make() };
      const out = uploadName(input);
      expect(out.filename).toMatch(/^[\x20-\x7e]+$/);
      expect(out.filename).not.toMatch(/["\\/;\r\n]/);
      expect(out.mime).toMatch(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/);
    }
  });
});

describe("what the bytes say", () => {
  const ftyp = new Uint8Array([0, 0, 0, 0x20, ...new TextEncoder().encode("ftypM4A "), 0, 0, 0, 0]);
  const adts = new Uint8Array([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc, 0x21, 0, 0, 0, 0, 0]);
  test("an MP4 container labelled audio/aac (an iOS recording) goes as M4A", () => {
    expect(uploadName({ mime: "audio/aac", bytes: ftyp })).toEqual({ filename: "voice-note.m4a", mime: "audio/mp4" });
  });
  test("raw ADTS AAC keeps its label, and is known to be raw AAC", () => {
    expect(uploadName({ mime: "audio/aac", bytes: adts })).toEqual({ filename: "voice-note.aac", mime: "audio/aac" });
    expect(isRawAac({ mime: "audio/aac", bytes: adts })).toBe(true);
    expect(isRawAac({ mime: "audio/aac", bytes: ftyp })).toBe(false);
  });
});
