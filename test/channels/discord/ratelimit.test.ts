/** Discord's REST rate-limit bookkeeping on data, with a clock the test moves. */
import { describe, expect, test } from "bun:test";
import { MIN_RETRY_WAIT_MS, RateLimits, routeKey } from "../../../src/channels/discord/ratelimit.ts";

const headers = (h: Record<string, string>) => new Headers(h);

describe("routeKey", () => {
  test("the channel is the major parameter; other ids and the emoji are placeholders", () => {
    expect(routeKey("post", "/channels/1400000000000000001/messages")).toEqual({
      route: "POST /channels/1400000000000000001/messages",
      major: "1400000000000000001",
    });
    expect(routeKey("PATCH", "/channels/1400000000000000001/messages/1500000000000000009")).toEqual({
      route: "PATCH /channels/1400000000000000001/messages/:id",
      major: "1400000000000000001",
    });
    expect(routeKey("PUT", "/channels/14000000001/messages/15000000009/reactions/%F0%9F%91%8D/@me").route).toBe(
      "PUT /channels/14000000001/messages/:id/reactions/:emoji/@me",
    );
    expect(routeKey("GET", "/gateway/bot")).toEqual({ route: "GET /gateway/bot", major: "" });
  });

  test("an interaction callback is limited per interaction, and its token never appears in the route", () => {
    const token = "aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDEyMzQ1Njc4OTpzZWNyZXQ";
    expect(routeKey("POST", `/interactions/1700000000000000001/${token}/callback`)).toEqual({
      route: "POST /interactions/1700000000000000001/:token/callback",
      major: "1700000000000000001",
    });
    // A token made only of digits is still a token, not an id.
    expect(routeKey("POST", "/interactions/1700000000000000002/123456789012/callback").route).toBe("POST /interactions/1700000000000000002/:token/callback");
  });
});

describe("RateLimits", () => {
  test("one interaction's empty bucket does not hold another's callback; forgetting refilled buckets keeps a closed one", () => {
    let now = 0;
    const limits = new RateLimits(() => now);
    const first = routeKey("POST", "/interactions/1700000000000000001/tok-a/callback");
    const second = routeKey("POST", "/interactions/1700000000000000002/tok-b/callback");
    limits.update(first, headers({ "x-ratelimit-bucket": "ix", "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "5" }));
    expect(limits.take(first)).toBe(5000);
    expect(limits.take(second)).toBe(0);
    now = 10;
    for (let i = 0; i < 1100; i++) {
      limits.update(
        routeKey("POST", `/interactions/${1800000000000000000n + BigInt(i)}/t/callback`),
        headers({ "x-ratelimit-remaining": "1", "x-ratelimit-reset-after": "0" }),
      );
    }
    expect(limits.take(first)).toBe(4990);
  });

  test("a bucket reported empty holds its route (and the same bucket's other channels are separate) until it resets", () => {
    let now = 0;
    const limits = new RateLimits(() => now);
    const a = routeKey("POST", "/channels/11111/messages");
    const b = routeKey("POST", "/channels/22222/messages");
    expect(limits.take(a)).toBe(0);
    limits.update(a, headers({ "x-ratelimit-bucket": "abc", "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "2.5" }));
    expect(limits.take(a)).toBe(2500);
    expect(limits.take(b)).toBe(0);
    now = 2500;
    expect(limits.take(a)).toBe(0);
  });

  test("remaining calls are counted down locally, so a burst does not overrun the bucket", () => {
    let now = 0;
    const limits = new RateLimits(() => now);
    const key = routeKey("POST", "/channels/11111/messages");
    limits.update(key, headers({ "x-ratelimit-remaining": "2", "x-ratelimit-reset-after": "1" }));
    expect([limits.take(key), limits.take(key), limits.take(key)]).toEqual([0, 0, 1000]);
    now = 1000;
    expect(limits.take(key)).toBe(0);
  });

  test("a 429: retry_after from the body (seconds, fractional), the global flag pausing every route, a floor against spinning", () => {
    const now = 0;
    const limits = new RateLimits(() => now);
    const messages = routeKey("POST", "/channels/11111/messages");
    const typing = routeKey("POST", "/channels/11111/typing");
    expect(limits.limited(messages, headers({ "retry-after": "2" }), { retry_after: 1.234, global: false })).toEqual({ waitMs: 1234, global: false });
    expect(limits.take(messages)).toBe(1234);
    expect(limits.take(typing)).toBe(0);
    expect(limits.limited(messages, headers({ "x-ratelimit-global": "true" }), { retry_after: 5 })).toEqual({ waitMs: 5000, global: true });
    expect(limits.take(typing)).toBe(5000);
    expect(limits.limited(typing, headers({}), { retry_after: 0 }).waitMs).toBe(MIN_RETRY_WAIT_MS);
    // No body: the Retry-After header, else a second.
    expect(limits.limited(typing, headers({ "retry-after": "3" }), {}).waitMs).toBe(3000);
    expect(limits.limited(typing, headers({}), {}).waitMs).toBe(1000);
  });
});
