/**
 * Writing to stdout and stderr without Node's stream machinery. In Bun the
 * first touch of `process.stdout` or `process.stderr` builds a Node stream
 * (its modules, a native sink, a few hundred KB): about 3 ms, more than
 * `fermix --version` costs in all, and paid again by the daemon for its log.
 * So text goes straight to the file descriptor with `writeSync`, the way
 * Node itself writes to files and pipes on Linux: whole, in order, before
 * the next line of code runs.
 *
 * Once something needs the stream itself (readline or a prompt takes the
 * terminal), `follow` hands the descriptor over: later text is queued on
 * the stream, behind whatever the stream already holds, never beside it.
 * A descriptor left non-blocking (building the stream does that to a pipe)
 * is waited on when full, as a blocking write would be: handing the rest to
 * the stream instead lost it when the process exited right after.
 */
import { writeSync } from "node:fs";

type Fd = 1 | 2;

const streamOf = (fd: Fd): NodeJS.WriteStream => (fd === 1 ? process.stdout : process.stderr);

/** The descriptors whose text now goes through the Node stream. */
const followed = new Set<Fd>();

/** Write `text` to stdout (1) or stderr (2), synchronously unless the stream has taken the descriptor over. */
export function writeFd(fd: Fd, text: string): void {
  if (followed.has(fd)) {
    streamOf(fd).write(text);
    return;
  }
  const bytes = Buffer.from(text);
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      // The other end went away (EPIPE), or the descriptor is closed: there is no one to tell.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return;
      // A full non-blocking pipe: wait for the reader, as a blocking write would.
      Bun.sleepSync(1);
    }
  }
}

/** From now on, text for `fd` goes through process.stdout / process.stderr (call before handing the stream to readline or a prompt). */
export function follow(fd: Fd): void {
  followed.add(fd);
}
