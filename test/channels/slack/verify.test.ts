import { describe, expect, test } from "bun:test";
import { type SlackVerifyInput, verifySlackRequest } from "../../../src/channels/slack/verify.ts";
import { signSlack } from "../../helpers/sign.ts";
import { DOC_BODY, DOC_SECRET, DOC_SIGNATURE, DOC_TIMESTAMP } from "./fixtures.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const NOW = Number(DOC_TIMESTAMP);

/** The documentation's request, with any field overridden. */
const request = (over: Partial<SlackVerifyInput> = {}): SlackVerifyInput => ({
  rawBody: encode(DOC_BODY),
  timestampHeader: DOC_TIMESTAMP,
  signatureHeader: DOC_SIGNATURE,
  signingSecret: DOC_SECRET,
  nowSeconds: NOW,
  ...over,
});
const reason = (over: Partial<SlackVerifyInput>) => {
  const result = verifySlackRequest(request(over));
  return result.ok ? "ok" : result.reason;
};

describe("the Slack documentation vector", () => {
  test("the published signature verifies", () => {
    expect(encode(DOC_BODY).length).toBe(362);
    expect(verifySlackRequest(request())).toEqual({ ok: true });
  });

  test("the test signer reproduces the published signature exactly", () => {
    expect(signSlack(DOC_BODY, DOC_SECRET, DOC_TIMESTAMP)).toEqual({
      "x-slack-request-timestamp": DOC_TIMESTAMP,
      "x-slack-signature": DOC_SIGNATURE,
    });
  });

  test("an altered body, a wrong secret or another timestamp's signature is invalid_signature", () => {
    const altered = encode(DOC_BODY);
    altered[altered.length - 1] = altered[altered.length - 1]! ^ 1;
    expect(reason({ rawBody: altered })).toBe("invalid_signature");
    expect(reason({ rawBody: encode(`${DOC_BODY} `) })).toBe("invalid_signature");
    expect(reason({ signingSecret: `${DOC_SECRET}x` })).toBe("invalid_signature");
    expect(reason({ timestampHeader: String(NOW + 1), nowSeconds: NOW + 1 })).toBe("invalid_signature");
  });
});

describe("order of checks", () => {
  test("no secret is not_configured, before anything about the request", () => {
    expect(reason({ signingSecret: undefined, signatureHeader: null, timestampHeader: null })).toBe("not_configured");
    expect(reason({ signingSecret: "" })).toBe("not_configured");
    expect(reason({ signingSecret: null })).toBe("not_configured");
  });

  test("missing headers are named, signature first", () => {
    expect(reason({ signatureHeader: null, timestampHeader: null })).toBe("missing_signature");
    expect(reason({ signatureHeader: "" })).toBe("missing_signature");
    expect(reason({ timestampHeader: undefined })).toBe("missing_timestamp");
    expect(reason({ timestampHeader: "" })).toBe("missing_timestamp");
  });

  test("a stale timestamp is reported even when the signature is also wrong", () => {
    expect(reason({ nowSeconds: NOW + 301, signatureHeader: `v0=${"0".repeat(64)}` })).toBe("stale_timestamp");
  });
});

describe("timestamp window", () => {
  test("300 s either way is accepted, 301 s is stale_timestamp", () => {
    expect(reason({ nowSeconds: NOW + 300 })).toBe("ok");
    expect(reason({ nowSeconds: NOW - 300 })).toBe("ok");
    expect(reason({ nowSeconds: NOW + 301 })).toBe("stale_timestamp");
    expect(reason({ nowSeconds: NOW - 301 })).toBe("stale_timestamp");
  });

  test("a timestamp that is not a plain integer is stale_timestamp", () => {
    for (const ts of ["abc", "1531420618.5", " 1531420618", "-1531420618", "1e9", "0x5b479a4a", "15314206180000000000"]) {
      expect(reason({ timestampHeader: ts })).toBe("stale_timestamp");
    }
  });

  test("a broken clock fails closed", () => {
    expect(reason({ nowSeconds: Number.NaN })).toBe("stale_timestamp");
  });
});

describe("signature header", () => {
  test("malformed or wrong-length signatures are invalid_signature, never a throw", () => {
    const hex = DOC_SIGNATURE.slice(3);
    for (const header of [
      "v0=",
      "v0=abc",
      `v0=${hex.slice(0, 63)}`,
      `v0=${hex}0`,
      `v0=${hex}00`,
      `v1=${hex}`,
      hex,
      `v0=${"z".repeat(64)}`,
      `${DOC_SIGNATURE},${DOC_SIGNATURE}`,
      "v0=\u00e9\u00e9",
    ]) {
      expect(reason({ signatureHeader: header })).toBe("invalid_signature");
    }
  });

  test("hex case does not matter: the bytes are compared", () => {
    expect(reason({ signatureHeader: `v0=${DOC_SIGNATURE.slice(3).toUpperCase()}` })).toBe("ok");
  });

  test("the HMAC covers the raw bytes, not a re-encoding of them", () => {
    const ts = String(NOW);
    const raw = encode('{"text":"caf\u00e9 \u{1F600}"}');
    const headers = signSlack(raw, "s3cret", ts);
    const ok = verifySlackRequest({
      rawBody: raw,
      timestampHeader: ts,
      signatureHeader: headers["x-slack-signature"],
      signingSecret: "s3cret",
      nowSeconds: NOW,
    });
    expect(ok).toEqual({ ok: true });
    // The same text with the escape spelled out is the same JSON but other bytes.
    const respelled = encode('{"text":"caf\\u00e9 \u{1F600}"}');
    expect(reason({ rawBody: respelled, signatureHeader: headers["x-slack-signature"], timestampHeader: ts, signingSecret: "s3cret" })).toBe(
      "invalid_signature",
    );
  });

  test("an empty body can be signed and verified", () => {
    const headers = signSlack("", "s3cret", NOW);
    expect(reason({ rawBody: new Uint8Array(), signatureHeader: headers["x-slack-signature"], signingSecret: "s3cret" })).toBe("ok");
  });
});
