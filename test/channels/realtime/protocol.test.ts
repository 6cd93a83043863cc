/** The companion protocol's requests, as a companion may send them and as they are refused. */
import { describe, expect, test } from "bun:test";
import { LineDecoder, LineTooLong } from "../../../src/channels/lines.ts";
import { decodeAudio, MAX_FRAME_BYTES, MAX_LINE, parseRequest } from "../../../src/channels/realtime/protocol.ts";

describe("parseRequest", () => {
  test.each([
    ['{"type":"start"}', { type: "start" }],
    ['{"type":"start","turn_detection":"manual","client":"My app"}', { type: "start", turn_detection: "manual", client: "My app" }],
    ['{"type":"audio","audio":"AAA="}', { type: "audio", audio: "AAA=" }],
    ['{"type":"commit"}', { type: "commit" }],
    ['{"type":"interrupt","played_ms":1200}', { type: "interrupt", played_ms: 1200 }],
    ['{"type":"mode","turn_detection":"server"}', { type: "mode", turn_detection: "server" }],
    ['{"type":"press","data":"fx:c:ABCD"}', { type: "press", data: "fx:c:ABCD" }],
    ['{"type":"stop"}', { type: "stop" }],
  ])("%s is a request", (line, request) => {
    expect(parseRequest(line)).toEqual(request as never);
  });

  test.each([
    ["not json", "not JSON"],
    ["[1,2]", "a request without a known type"],
    ['{"type":"dance"}', 'a "dance" request that does not fit the protocol'],
    ['{"type":"start","turn_detection":"psychic"}', 'a "start" request that does not fit the protocol'],
    ['{"type":"interrupt","played_ms":-5}', 'a "interrupt" request that does not fit the protocol'],
    ['{"type":"audio"}', 'a "audio" request that does not fit the protocol'],
  ])("%s is refused: %s", (line, error) => {
    expect(parseRequest(line)).toEqual({ error });
  });
});

describe("decodeAudio", () => {
  test("base64 of whole PCM16 samples, up to 5 s a frame", () => {
    expect([...decodeAudio(Buffer.from([1, 2, 3, 4]).toString("base64"))!]).toEqual([1, 2, 3, 4]);
    expect(decodeAudio(Buffer.alloc(MAX_FRAME_BYTES).toString("base64"))?.byteLength).toBe(MAX_FRAME_BYTES);
  });

  test("an odd byte, nothing at all, too much, or not base64 is not audio", () => {
    expect(decodeAudio(Buffer.from([1, 2, 3]).toString("base64"))).toBeUndefined();
    expect(decodeAudio("")).toBeUndefined();
    expect(decodeAudio(Buffer.alloc(MAX_FRAME_BYTES + 2).toString("base64"))).toBeUndefined();
    expect(decodeAudio("@@@@")).toBeUndefined();
  });
});

describe("lines on the socket", () => {
  test("a line over the limit is reported, dropped to its newline, and the next line is read", () => {
    const decoder = new LineDecoder(10);
    const out = [...decoder.push(Buffer.from('{"a":1}\n0123456789ABC')), ...decoder.push(Buffer.from('DEF\n{"b":2}\n'))];
    expect(out.map((line) => (line instanceof LineTooLong ? "too long" : line))).toEqual(['{"a":1}', "too long", '{"b":2}']);
    expect(MAX_LINE).toBeGreaterThan((MAX_FRAME_BYTES / 3) * 4);
  });
});
