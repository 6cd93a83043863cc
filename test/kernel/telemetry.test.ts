import { expect, test } from "bun:test";
import { Telemetry } from "../../src/kernel/telemetry.ts";

test("subscribers get typed events; unsubscribe stops them; a throwing subscriber breaks nothing", () => {
  const bus = new Telemetry();
  const seen: string[] = [];
  bus.on("channel.webhook", () => {
    throw new Error("broken subscriber");
  });
  const off = bus.on("channel.webhook", (e) => seen.push(`${e.metadata.channel}:${e.measurements.fresh}/${e.measurements.duplicate}`));
  bus.onAny((e) => seen.push(`any:${e.name}`));
  bus.emit("channel.webhook", { measurements: { fresh: 2, duplicate: 1, duration_ms: 3 }, metadata: { channel: "slack", outcome: "accepted" } });
  off();
  bus.emit("channel.webhook", { measurements: { fresh: 1, duplicate: 0, duration_ms: 1 }, metadata: { channel: "whatsapp", outcome: "accepted" } });
  expect(seen).toEqual(["slack:2/1", "any:channel.webhook", "any:channel.webhook"]);
});
