/** WhatsApp Cloud API payloads for tests: the official example verbatim, and builders around it. */

/** The official inbound text example (webhooks/reference/messages), compact: 499 bytes. */
export const OFFICIAL_TEXT_EXAMPLE =
  '{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"contacts":[{"profile":{"name":"Sheena Nelson"},"wa_id":"16505551234"}],"messages":[{"from":"16505551234","id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=","timestamp":"1749416383","type":"text","text":{"body":"Does it come in another color?"}}]},"field":"messages"}]}]}';

/** A self-generated vector: the example above signed (HMAC-SHA256 of its exact bytes) with `test_app_secret`. */
export const OFFICIAL_EXAMPLE_SECRET = "test_app_secret";
export const OFFICIAL_EXAMPLE_SIGNATURE = "sha256=ded1d1d9621cffa39832ccf2b330fa476b4dc8ec2a5d102e1e554312b3f21d42";

export const SENDER = "16505551234";

/** A webhook payload whose one change carries the given value. */
export function payload(value: Record<string, unknown>, field = "messages"): Record<string, unknown> {
  return {
    object: "whatsapp_business_account",
    entry: [{ id: "102290129340398", changes: [{ value: { messaging_product: "whatsapp", ...value }, field }] }],
  };
}

/** One inbound message of any type, from SENDER, sent now (or at `timestamp`, Unix seconds, when given in `body`). */
export function message(id: string, type: string, body: Record<string, unknown> = {}): Record<string, unknown> {
  return { from: SENDER, id, timestamp: String(Math.floor(Date.now() / 1000)), type, ...body };
}

/** A payload carrying these messages, with the sender's contact card. */
export function messagesPayload(...messages: Record<string, unknown>[]): Record<string, unknown> {
  return payload({ contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: SENDER }], messages });
}
