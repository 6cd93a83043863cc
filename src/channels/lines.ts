/**
 * JSON lines over a byte stream, as the local sockets speak them (the
 * control socket, realtime voice's companion socket): split on newlines,
 * blank lines skipped, a line split across chunks (or inside a multi-byte
 * character) put back together.
 */

/** A line longer than the decoder allows: the rest of it up to the next newline is dropped. */
export class LineTooLong extends Error {
  override name = "LineTooLong";
}

/** Split a byte stream into lines; malformed lines are the caller's to report, not thrown here. */
export class LineDecoder {
  private buffer = "";
  private skipping = false;
  private readonly decoder = new TextDecoder();

  /** `maxLine`: the longest line kept, in characters (default: no limit). */
  constructor(private readonly maxLine = Number.POSITIVE_INFINITY) {}

  /** The complete lines in what has arrived so far; a `LineTooLong` in place of each line over the limit. */
  push(chunk: Uint8Array): Array<string | LineTooLong> {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    const parts = this.buffer.split("\n");
    this.buffer = parts.pop() ?? "";
    const out: Array<string | LineTooLong> = [];
    for (const part of parts) {
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      if (part.length > this.maxLine) out.push(new LineTooLong(`a line of ${part.length} characters (at most ${this.maxLine})`));
      else if (part.trim() !== "") out.push(part);
    }
    if (this.buffer.length > this.maxLine) {
      // No newline yet and already too long: drop it now rather than hold it, and the rest of it as it comes.
      if (!this.skipping) out.push(new LineTooLong(`a line of more than ${this.maxLine} characters`));
      this.buffer = "";
      this.skipping = true;
    }
    return out;
  }
}
