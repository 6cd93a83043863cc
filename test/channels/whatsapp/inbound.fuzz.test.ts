import { expect, test } from "bun:test";
import { parseWhatsAppBody, parseWhatsAppPayload, type WhatsAppParseResult } from "../../../src/channels/whatsapp/inbound.ts";
import { inboundProblems, mutateBytes, mutateJson, randomJson, rng } from "../../helpers/fuzz.ts";
import { message, messagesPayload, OFFICIAL_TEXT_EXAMPLE, payload } from "./fixtures.ts";

const SEED = 0x3a7a;
const RUNS = 10_000;

const SEEDS: unknown[] = [
  JSON.parse(OFFICIAL_TEXT_EXAMPLE),
  messagesPayload(
    message("wamid.1", "image", { image: { caption: "c", mime_type: "image/jpeg", id: "M1" } }),
    message("wamid.2", "audio", { audio: { mime_type: "audio/ogg", id: "M2", voice: true } }),
    message("wamid.3", "document", { document: { filename: "a.pdf", mime_type: "application/pdf", id: "M3" } }),
  ),
  messagesPayload(message("wamid.4", "reaction", { reaction: { message_id: "wamid.0", emoji: "x" } })),
  payload({ statuses: [{ id: "wamid.o", status: "read", timestamp: "1", recipient_id: "1" }] }),
];

function problem(result: WhatsAppParseResult): string | undefined {
  if (result.kind === "invalid") return undefined;
  if (result.kind !== "batch") return `unknown kind ${(result as { kind: unknown }).kind}`;
  if (!Number.isInteger(result.statuses) || !Number.isInteger(result.ignored)) return "counts are not integers";
  for (const { message, idempotencyKey } of result.messages) {
    const problems = inboundProblems(message);
    if (message.channel !== "whatsapp") problems.push("channel is not whatsapp");
    if (idempotencyKey !== message.messageId) problems.push("key is not the wamid");
    if (message.media.length > 1) problems.push("more than one attachment");
    if (problems.length > 0) return problems.join("; ");
  }
  return undefined;
}

test(`${RUNS} random and mutated WhatsApp bodies never throw and always classify`, () => {
  const r = rng(SEED);
  let batches = 0;
  let withMessages = 0;
  let invalid = 0;
  for (let i = 0; i < RUNS; i++) {
    const mode = i % 3;
    const seed = r.pick(SEEDS);
    // Inputs are built outside the try, so a throw below is the parser's own.
    const input = mode === 0 ? randomJson(r) : mode === 1 ? mutateJson(r, seed) : mutateBytes(r, seed);
    let result: WhatsAppParseResult;
    try {
      result = input instanceof Uint8Array ? parseWhatsAppBody(input) : parseWhatsAppPayload(input);
    } catch (error) {
      throw new Error(`seed ${SEED}, run ${i}: parser threw ${error}`);
    }
    const wrong = problem(result);
    if (wrong) throw new Error(`seed ${SEED}, run ${i}: ${wrong}: ${JSON.stringify(result)}`);
    if (result.kind === "invalid") invalid++;
    else {
      batches++;
      if (result.messages.length > 0) withMessages++;
    }
  }
  expect(invalid).toBeGreaterThan(0);
  expect(batches).toBeGreaterThan(0);
  expect(withMessages).toBeGreaterThan(0);
});
