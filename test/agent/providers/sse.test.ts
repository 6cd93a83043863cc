/** The SSE reader on awkward input: every chunking of a stream must give the same events. */
import { describe, expect, test } from "bun:test";
import { readSse, type SseEvent, SseParser } from "../../../src/agent/providers/sse.ts";

function parseAll(pieces: string[]): SseEvent[] {
  const parser = new SseParser();
  return [...pieces.flatMap((p) => parser.push(p)), ...parser.end()];
}

async function readBytes(chunks: Uint8Array[]): Promise<SseEvent[]> {
  async function* source() {
    yield* chunks;
  }
  const out: SseEvent[] = [];
  for await (const event of readSse(source())) out.push(event);
  return out;
}

const SAMPLE = [
  ": keep-alive comment\n",
  "event: response.created\n",
  'data: {"type":"response.created"}\n',
  "\n",
  "event: response.output_text.delta\r\n",
  'data: {"delta":"héllo 👋"}\r\n',
  "\r\n",
  "data: line one\r",
  "data: line two\r",
  "\r",
  "data:no space\n",
  "id: 7\n",
  "\n",
  "data: [DONE]\n\n",
].join("");

const EXPECTED: SseEvent[] = [
  { event: "response.created", data: '{"type":"response.created"}' },
  { event: "response.output_text.delta", data: '{"delta":"héllo 👋"}' },
  { event: "message", data: "line one\nline two" },
  { event: "message", data: "no space", id: "7" },
  { event: "message", data: "[DONE]", id: "7" },
];

describe("SseParser", () => {
  test("parses a whole stream: names, comments, CRLF, CR, multi-line data, id", () => {
    expect(parseAll([SAMPLE])).toEqual(EXPECTED);
  });

  test("every split into two pieces gives the same events", () => {
    for (let i = 0; i <= SAMPLE.length; i++) {
      expect(parseAll([SAMPLE.slice(0, i), SAMPLE.slice(i)])).toEqual(EXPECTED);
    }
  });

  test("one character at a time gives the same events", () => {
    expect(parseAll([...SAMPLE])).toEqual(EXPECTED);
  });

  test("a CRLF split between CR and LF ends one line, not two", () => {
    // Were the LF taken as a second line end, the empty line would dispatch `a` early and lose `b`.
    expect(parseAll(["data: a\r", "\ndata: b\r\n\r\n"])).toEqual([{ event: "message", data: "a\nb" }]);
  });

  test("a CR at the end of one piece, then an empty piece, then LF", () => {
    expect(parseAll(["data: a\r", "", "\n\n"])).toEqual([{ event: "message", data: "a" }]);
  });

  test("comments and events without data dispatch nothing; the event name resets after each event", () => {
    expect(parseAll([": ping\n\n", "event: lonely\n\n", "data: x\n\n"])).toEqual([{ event: "message", data: "x" }]);
  });

  test("an empty data field is an event with empty data; a field with no colon is a field with empty value", () => {
    expect(parseAll(["data:\n\n", "data\n\n"])).toEqual([
      { event: "message", data: "" },
      { event: "message", data: "" },
    ]);
  });

  test("only one leading space is stripped, and colons in the value are kept", () => {
    expect(parseAll(['data:  {"a":"b:c"}\n\n'])).toEqual([{ event: "message", data: ' {"a":"b:c"}' }]);
  });

  test("unknown fields and retry are ignored", () => {
    expect(parseAll(["retry: 1000\nfoo: bar\ndata: x\n\n"])).toEqual([{ event: "message", data: "x" }]);
  });

  test("a leading byte-order mark is skipped", () => {
    expect(parseAll(["\uFEFFdata: x\n\n"])).toEqual([{ event: "message", data: "x" }]);
  });

  test("an event left unterminated at the end of the stream is still dispatched", () => {
    expect(parseAll(["data: a\n\ndata: b"])).toEqual([
      { event: "message", data: "a" },
      { event: "message", data: "b" },
    ]);
  });

  test("a very long line in many pieces is assembled", () => {
    const long = "x".repeat(100_000);
    const pieces = ["data: ", ...long.match(/.{1,1000}/g)!, "\n\n"];
    expect(parseAll(pieces)).toEqual([{ event: "message", data: long }]);
  });
});

describe("readSse", () => {
  const bytes = new TextEncoder().encode(SAMPLE);

  test("byte by byte, splitting multi-byte UTF-8 characters", async () => {
    const chunks = Array.from(bytes, (b) => new Uint8Array([b]));
    expect(await readBytes(chunks)).toEqual(EXPECTED);
  });

  test("every split into three pieces", async () => {
    for (let i = 0; i < bytes.length; i += 7) {
      for (let j = i; j < bytes.length; j += 11) {
        expect(await readBytes([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)])).toEqual(EXPECTED);
      }
    }
  });

  test("empty chunks are harmless", async () => {
    const empty = new Uint8Array(0);
    expect(await readBytes([empty, bytes, empty])).toEqual(EXPECTED);
  });
});
