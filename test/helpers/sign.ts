/**
 * Sign webhook requests the way Slack and Meta do, for tests of the verifiers
 * and of the HTTP routes. Uses Bun's own HMAC (not node:crypto, which the
 * verifiers use) so a test does not check an implementation against itself.
 */

type Body = string | Uint8Array;

const hmacHex = (secret: string, ...chunks: Body[]): string => {
  const hasher = new Bun.CryptoHasher("sha256", secret);
  for (const chunk of chunks) hasher.update(chunk);
  return hasher.digest("hex");
};

/** Headers of a Slack request signed at `ts` (Unix seconds): timestamp and `v0=` signature. */
export function signSlack(body: Body, secret: string, ts: number | string): Record<string, string> {
  const timestamp = String(ts);
  return {
    "x-slack-request-timestamp": timestamp,
    "x-slack-signature": `v0=${hmacHex(secret, `v0:${timestamp}:`, body)}`,
  };
}

/** Headers of a WhatsApp (Meta) webhook POST: `x-hub-signature-256: sha256=<hex>`. */
export function signWhatsApp(body: Body, secret: string): Record<string, string> {
  return { "x-hub-signature-256": `sha256=${hmacHex(secret, body)}` };
}

/** The current time in whole Unix seconds, what Slack puts in its timestamp header. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** POST a JSON body to a running daemon's Slack webhook, signed now with `secret`, as Slack sends it. */
export function postSlackWebhook(daemonUrl: URL, body: string, secret: string): Promise<Response> {
  return fetch(new URL("/webhook/slack", daemonUrl), {
    method: "POST",
    headers: { "content-type": "application/json", ...signSlack(body, secret, nowSeconds()) },
    body,
  });
}

/** POST a JSON body to a running daemon's WhatsApp webhook, signed with the app secret, as Meta sends it. */
export function postWhatsAppWebhook(daemonUrl: URL, body: string, secret: string): Promise<Response> {
  return fetch(new URL("/webhook/whatsapp", daemonUrl), {
    method: "POST",
    headers: { "content-type": "application/json", ...signWhatsApp(body, secret) },
    body,
  });
}
