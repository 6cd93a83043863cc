/**
 * A small server-sent events reader (the WHATWG "event stream" format): `event:`
 * and `data:` fields, multi-line data, `:` comments, LF / CRLF / CR line ends,
 * and chunk boundaries anywhere — inside a line, between CR and LF, or inside a
 * multi-byte UTF-8 character. The parser is pure; `readSse` adds the decoding.
 */

/** One dispatched event. `event` is "message" when the server named none. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

const LINE_END = /[\r\n]/g;

/** Incremental SSE parser: feed it text as it arrives, get back the events it completed. */
export class SseParser {
  /** Pieces of the current, not yet terminated line (kept as pieces so a long line is not rescanned). */
  private partial: string[] = [];
  private data: string[] = [];
  private event = "";
  private lastId: string | undefined;
  /** The previous text ended in CR: a LF at the start of the next one ends the same line. */
  private skipLF = false;
  private started = false;

  /** Parse the next piece of the stream; returns the events completed by it. */
  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) start = 1;
    }
    if (this.skipLF && text.length > 0) {
      this.skipLF = false;
      if (text.charCodeAt(start) === 10) start += 1;
    }
    LINE_END.lastIndex = start;
    for (let m = LINE_END.exec(text); m; m = LINE_END.exec(text)) {
      const end = m.index;
      this.partial.push(text.slice(start, end));
      this.line(this.partial.join(""), out);
      this.partial = [];
      start = end + 1;
      if (text.charCodeAt(end) === 13) {
        if (start === text.length) this.skipLF = true;
        else if (text.charCodeAt(start) === 10) start += 1;
      }
      LINE_END.lastIndex = start;
    }
    if (start < text.length) this.partial.push(text.slice(start));
    return out;
  }

  /**
   * The stream ended. The spec drops an unterminated event; we are lenient and
   * dispatch it, because a server that forgets the final blank line still meant it.
   */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.partial.length > 0) this.line(this.partial.join(""), out);
    this.partial = [];
    this.line("", out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === "") {
      if (this.data.length > 0) {
        const event: SseEvent = { event: this.event || "message", data: this.data.join("\n") };
        if (this.lastId !== undefined) event.id = this.lastId;
        out.push(event);
      }
      this.data = [];
      this.event = "";
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" starts a comment (keep-alives)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
    // "retry" and unknown fields are ignored: we never reconnect an SSE stream.
  }
}

/** Read SSE events from a byte stream, decoding UTF-8 across chunk boundaries. */
export async function* readSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  for await (const chunk of chunks) yield* parser.push(decoder.decode(chunk, { stream: true }));
  yield* parser.push(decoder.decode());
  yield* parser.end();
}
