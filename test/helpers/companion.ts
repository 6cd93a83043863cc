/**
 * A companion app for tests of the compiled daemon: it connects to
 * `<home>/realtime.sock` and speaks the companion protocol
 * (docs/realtime.md) as JSON lines, keeping every event it is sent.
 */
import { join } from "node:path";
import type { Socket } from "bun";
import type { CompanionEvent, CompanionRequest } from "../../src/channels/realtime/protocol.ts";
import { until } from "./wait.ts";

export interface TestCompanion {
  events: CompanionEvent[];
  of<T extends CompanionEvent["type"]>(type: T): Array<Extract<CompanionEvent, { type: T }>>;
  send(request: CompanionRequest): void;
  /** Wait until `count` events of `type` have come. */
  waitFor(type: CompanionEvent["type"], count?: number, timeoutMs?: number): Promise<void>;
  closed(): boolean;
  close(): void;
}

/** Connect to the realtime socket of the Fermix home `home`. */
export async function connectCompanion(home: string): Promise<TestCompanion> {
  const events: CompanionEvent[] = [];
  let buffer = "";
  let closed = false;
  const socket: Socket<undefined> = await Bun.connect({
    unix: join(home, "realtime.sock"),
    socket: {
      data(_socket, chunk) {
        buffer += new TextDecoder().decode(chunk);
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as CompanionEvent);
      },
      close() {
        closed = true;
      },
    },
  });
  const of = <T extends CompanionEvent["type"]>(type: T) => events.filter((e): e is Extract<CompanionEvent, { type: T }> => e.type === type);
  return {
    events,
    of,
    send: (request) => void socket.write(`${JSON.stringify(request)}\n`),
    waitFor: (type, count = 1, timeoutMs = 10_000) => until(`${count} × ${type} at the companion`, () => of(type).length >= count, timeoutMs),
    closed: () => closed,
    close: () => socket.end(),
  };
}
