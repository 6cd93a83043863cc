import { describe, expect, test } from "bun:test";
import { Logger, Redactor } from "../../src/kernel/log.ts";

function capture(level: "debug" | "info" = "info") {
  const lines: string[] = [];
  const log = new Logger({ write: (l) => lines.push(l) }, level, new Redactor());
  return { log, lines };
}

describe("logger", () => {
  test("writes one logfmt line with the component's fields", () => {
    const { log, lines } = capture();
    log.child({ component: "slack" }).info("reply sent", { parts: 2, chat: "C 1" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ts=\S+ level=info msg="reply sent" component=slack parts=2 chat="C 1"\n$/);
  });

  test("a registered secret never appears, wherever it is", () => {
    const { log, lines } = capture();
    log.redactor.add("xoxb-1234567890-abcdef");
    log.error("call failed: Bearer xoxb-1234567890-abcdef rejected", { url: "https://x/?token=xoxb-1234567890-abcdef" });
    expect(lines.join("")).not.toContain("xoxb-1234567890-abcdef");
    expect(lines.join("")).toContain("[redacted]");
  });

  test("fields named like credentials are redacted even when unregistered", () => {
    const { log, lines } = capture();
    log.warn("x", { bot_token: "123:abc", api_key: "sk-1", Authorization: "Bearer z", signature: "v0=1" });
    expect(lines[0]).toContain("bot_token=[redacted] api_key=[redacted] Authorization=[redacted] signature=[redacted]");
  });

  test("levels below the minimum are dropped", () => {
    const { log, lines } = capture("info");
    log.debug("noise");
    log.info("kept");
    expect(lines).toHaveLength(1);
  });

  test("short values are not substring-redacted (they would shred ordinary words)", () => {
    const { log, lines } = capture();
    log.redactor.add("abc");
    log.info("abcdef");
    expect(lines[0]).toContain("msg=abcdef");
  });
});
