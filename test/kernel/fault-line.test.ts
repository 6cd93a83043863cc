/** The page-safe fault line: class, HTTP status and who failed, built from data alone, one line per class. */
import { describe, expect, test } from "bun:test";
import { describeForLog, type FaultClass, faultLine, PageSafeError, pageSafeMessage, providerFaultLine, statusFault } from "../../src/kernel/fault-line.ts";

describe("a provider's fault on a page", () => {
  test.each<[FaultClass, number | undefined, string]>([
    ["server", 500, "provider openai: server error (HTTP 500)"],
    ["rate_limited", 429, "provider openai: rate limited (HTTP 429)"],
    ["auth", 401, "provider openai: the provider refused the key (HTTP 401); run `fermix doctor`"],
    ["auth", 403, "provider openai: the provider refused the key (HTTP 403); run `fermix doctor`"],
    ["quota", 429, "provider openai: out of quota (HTTP 429)"],
    ["rejected", 400, "provider openai: the provider refused the request (HTTP 400)"],
    ["unreachable", undefined, "provider openai: could not be reached"],
    ["timeout", undefined, "provider openai: no answer in time"],
    ["cut_off", undefined, "provider openai: answer cut off"],
    // An error event inside a 200 stream: the status says nothing, so none is shown.
    ["server", undefined, "provider openai: server error"],
  ])("%s %s", (fault, status, line) => {
    expect(providerFaultLine("openai", status === undefined ? { fault } : { fault, status })).toBe(line);
  });

  test("a degraded provider with no fault recorded is 'failing'", () => {
    expect(providerFaultLine("openai", undefined)).toBe("provider openai: failing");
  });

  test("only an HTTP status is shown where the status goes: whatever else a caller put there is not", () => {
    const odd = { fault: "server", status: "+15551234567 said hello" } as unknown as Parameters<typeof faultLine>[0];
    expect(faultLine(odd)).toBe("server error");
    expect(faultLine({ fault: "server", status: 15551234567 })).toBe("server error");
  });

  test("an unknown class (a newer or older build's) is 'failing', never the value itself", () => {
    const unknown = { fault: "Sorry, +15551234567 cannot be reached" } as unknown as Parameters<typeof faultLine>[0];
    expect(faultLine(unknown)).toBe("failing");
  });

  test("who refused is named by the caller: a platform's refusal is not the provider's", () => {
    expect(faultLine({ fault: "rejected", status: 400 }, "Telegram")).toBe("Telegram refused the request (HTTP 400)");
  });
});

test("statusFault: the class an HTTP status means on its own; no status is a connection that failed", () => {
  expect([401, 403, 429, 500, 503, 400, 404, undefined].map(statusFault)).toEqual([
    "auth",
    "auth",
    "rate_limited",
    "server",
    "server",
    "rejected",
    "rejected",
    "unreachable",
  ]);
});

test("a PageSafeError's message is what a page may show; any other error shows nothing, and the log gets the whole chain", () => {
  const platform = new Error("chat 42: message 'call +15551234567' could not be delivered");
  const safe = new PageSafeError("Slack did not accept the bot token (HTTP 401)", { cause: platform });
  expect(pageSafeMessage(safe)).toBe("Slack did not accept the bot token (HTTP 401)");
  expect(pageSafeMessage(platform)).toBeUndefined();
  expect(pageSafeMessage("a string")).toBeUndefined();
  expect(describeForLog(safe)).toBe("Slack did not accept the bot token (HTTP 401): chat 42: message 'call +15551234567' could not be delivered");
});
