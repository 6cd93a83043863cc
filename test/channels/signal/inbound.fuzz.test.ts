/**
 * signal-cli's stdout is parsed by us: random and mutated `receive`
 * notifications never throw, always classify, never name a file outside the
 * attachment store, and every message id they produce can be reacted to.
 */
import { afterAll, expect, test } from "bun:test";
import { isAttachmentId } from "../../../src/channels/signal/files.ts";
import { parseMessageId, parseSignalReceive, type SignalParseResult } from "../../../src/channels/signal/inbound.ts";
import { SIGNAL_GROUP, startSignalFake } from "../../fakes/signal.ts";
import { inboundProblems, mutateBytes, mutateJson, randomJson, rng } from "../../helpers/fuzz.ts";

const SEED = 0x516e;
const RUNS = 10_000;
const fake = startSignalFake();
afterAll(() => fake.stop());

const image = fake.addAttachment(new Uint8Array(4), "image/png", "a.png");
const SEEDS: unknown[] = [
  fake.envelope.text("hello"),
  fake.envelope.text("group hello", { groupId: SIGNAL_GROUP, attachments: [image] }),
  fake.envelope.text("", { attachments: [image, { contentType: "audio/aac", filename: null, id: "v.aac", size: 3 }], noUuid: true }),
  fake.envelope.receipt(),
  fake.envelope.sync(),
];

function problem(result: SignalParseResult): string | undefined {
  if (result.kind === "invalid") return undefined;
  if (result.kind === "ignored") return typeof result.why === "string" && result.why !== "" ? undefined : "no reason";
  if (result.kind !== "message") return `unknown kind ${(result as { kind: unknown }).kind}`;
  const { message, idempotencyKey } = result;
  const problems = inboundProblems(message);
  if (message.channel !== "signal") problems.push("channel is not signal");
  if (idempotencyKey !== message.messageId) problems.push("key is not the message id");
  if (!parseMessageId(message.messageId)) problems.push("message id cannot be reacted to");
  for (const media of message.media) if (!isAttachmentId(media.ref)) problems.push(`unsafe attachment ref ${media.ref}`);
  return problems.length > 0 ? problems.join("; ") : undefined;
}

test(`${RUNS} random and mutated receive notifications never throw and always classify`, () => {
  const r = rng(SEED);
  const counts = { message: 0, ignored: 0, invalid: 0 };
  for (let i = 0; i < RUNS; i++) {
    const mode = i % 3;
    const seed = r.pick(SEEDS);
    let input: unknown = mode === 0 ? randomJson(r) : mode === 1 ? mutateJson(r, seed) : mutateBytes(r, seed);
    if (input instanceof Uint8Array) {
      // What rpc.ts does with a line: JSON or nothing.
      try {
        input = JSON.parse(new TextDecoder().decode(input));
      } catch {
        continue;
      }
    }
    let result: SignalParseResult;
    try {
      result = parseSignalReceive(input, { account: fake.account, receivedAt: 1 });
    } catch (error) {
      throw new Error(`seed ${SEED}, run ${i}: parser threw ${error}`);
    }
    const wrong = problem(result);
    if (wrong) throw new Error(`seed ${SEED}, run ${i}: ${wrong}: ${JSON.stringify(result)}`);
    counts[result.kind]++;
  }
  expect(counts.invalid).toBeGreaterThan(0);
  expect(counts.ignored).toBeGreaterThan(0);
  expect(counts.message).toBeGreaterThan(0);
});
