import { describe, expect, test } from "bun:test";
import {
  constantTimeEqual,
  verifyWhatsAppChallenge,
  verifyWhatsAppSignature,
  type WhatsAppChallengeInput,
  type WhatsAppSignatureInput,
} from "../../../src/channels/whatsapp/verify.ts";
import { signWhatsApp } from "../../helpers/sign.ts";
import { OFFICIAL_EXAMPLE_SECRET, OFFICIAL_EXAMPLE_SIGNATURE, OFFICIAL_TEXT_EXAMPLE } from "./fixtures.ts";

const encode = (text: string) => new TextEncoder().encode(text);

// GitHub's published vector for the same sha256=<hex> scheme (Meta publishes none).
const GITHUB_SECRET = "It's a Secret to Everybody";
const GITHUB_BODY = "Hello, World!";
const GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

const signature = (over: Partial<WhatsAppSignatureInput>) => {
  const result = verifyWhatsAppSignature({
    rawBody: encode(OFFICIAL_TEXT_EXAMPLE),
    signatureHeader: OFFICIAL_EXAMPLE_SIGNATURE,
    appSecret: OFFICIAL_EXAMPLE_SECRET,
    ...over,
  });
  return result.ok ? "ok" : result.reason;
};

describe("X-Hub-Signature-256", () => {
  test("GitHub's published vector verifies, and the test signer reproduces it", () => {
    expect(signWhatsApp(GITHUB_BODY, GITHUB_SECRET)).toEqual({ "x-hub-signature-256": GITHUB_SIGNATURE });
    expect(signature({ rawBody: encode(GITHUB_BODY), signatureHeader: GITHUB_SIGNATURE, appSecret: GITHUB_SECRET })).toBe("ok");
  });

  test("the self-generated vector over the official 499-byte example verifies", () => {
    expect(encode(OFFICIAL_TEXT_EXAMPLE).length).toBe(499);
    expect(signWhatsApp(OFFICIAL_TEXT_EXAMPLE, OFFICIAL_EXAMPLE_SECRET)["x-hub-signature-256"]).toBe(OFFICIAL_EXAMPLE_SIGNATURE);
    expect(signature({})).toBe("ok");
  });

  test("an altered body, re-serialized JSON or a wrong secret is invalid_signature", () => {
    const altered = encode(OFFICIAL_TEXT_EXAMPLE);
    altered[100] = altered[100]! ^ 1;
    expect(signature({ rawBody: altered })).toBe("invalid_signature");
    const pretty = JSON.stringify(JSON.parse(OFFICIAL_TEXT_EXAMPLE), null, 2);
    expect(signature({ rawBody: encode(pretty) })).toBe("invalid_signature");
    expect(signature({ appSecret: "test_app_secreT" })).toBe("invalid_signature");
  });

  test("not configured comes first, then a missing header", () => {
    expect(signature({ appSecret: undefined, signatureHeader: null })).toBe("not_configured");
    expect(signature({ appSecret: "" })).toBe("not_configured");
    expect(signature({ signatureHeader: null })).toBe("missing_signature");
    expect(signature({ signatureHeader: "" })).toBe("missing_signature");
  });

  test("malformed headers are invalid_signature, never a throw", () => {
    const hex = OFFICIAL_EXAMPLE_SIGNATURE.slice(7);
    for (const header of [
      "sha256=",
      hex,
      `sha1=${hex}`,
      `SHA256=${hex}`,
      `sha256=${hex.slice(1)}`,
      `sha256=${hex}a`,
      `sha256=${hex}ab`,
      `sha256=${"g".repeat(64)}`,
      `sha256= ${hex}`,
      "sha256=\u{1F600}",
    ]) {
      expect(signature({ signatureHeader: header })).toBe("invalid_signature");
    }
    expect(signature({ signatureHeader: `sha256=${hex.toUpperCase()}` })).toBe("ok");
  });
});

const challenge = (over: Partial<WhatsAppChallengeInput>) =>
  verifyWhatsAppChallenge({ mode: "subscribe", token: "verify-me", challenge: "1158201444", verifyToken: "verify-me", ...over });

describe("GET hub challenge", () => {
  test("subscribe with the right token echoes the challenge", () => {
    expect(challenge({})).toEqual({ ok: true, challenge: "1158201444" });
  });

  test("each failure has its reason", () => {
    expect(challenge({ verifyToken: undefined })).toEqual({ ok: false, reason: "not_configured" });
    expect(challenge({ verifyToken: "" })).toEqual({ ok: false, reason: "not_configured" });
    expect(challenge({ token: null })).toEqual({ ok: false, reason: "missing_token" });
    expect(challenge({ token: "" })).toEqual({ ok: false, reason: "missing_token" });
    for (const token of ["verify-mE", "verify-m", "verify-me ", "verify-me-and-more", "x"]) {
      expect(challenge({ token })).toEqual({ ok: false, reason: "invalid_token" });
    }
    expect(challenge({ mode: "unsubscribe" })).toEqual({ ok: false, reason: "invalid_webhook_payload" });
    expect(challenge({ mode: null })).toEqual({ ok: false, reason: "invalid_webhook_payload" });
    expect(challenge({ challenge: undefined })).toEqual({ ok: false, reason: "invalid_webhook_payload" });
  });

  test("the token is judged before the mode, so an outsider only ever sees 401 reasons", () => {
    expect(challenge({ mode: "bogus", token: "wrong" })).toEqual({ ok: false, reason: "invalid_token" });
    expect(challenge({ mode: "bogus", token: null, challenge: null })).toEqual({ ok: false, reason: "missing_token" });
  });

  test("constantTimeEqual compares strings of any length without throwing", () => {
    expect(constantTimeEqual("a", "a")).toBe(true);
    expect(constantTimeEqual("", "")).toBe(true);
    expect(constantTimeEqual("a", "ab")).toBe(false);
    expect(constantTimeEqual("\u{1F600}", "\u{1F601}")).toBe(false);
  });
});
