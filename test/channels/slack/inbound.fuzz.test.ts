import { expect, test } from "bun:test";
import { parseSlackBody, parseSlackEvent, type SlackParseResult } from "../../../src/channels/slack/inbound.ts";
import { inboundProblems, mutateBytes, mutateJson, randomJson, rng } from "../../helpers/fuzz.ts";
import { BOT, dmEvent, envelope, fileShareEvent, messageEvent, URL_VERIFICATION } from "./fixtures.ts";

const SEED = 0x51ac;
const RUNS = 10_000;

const SEEDS: unknown[] = [
  URL_VERIFICATION,
  envelope(dmEvent()),
  envelope(messageEvent({ text: `<@${BOT}> hi`, thread_ts: "1699999999.000001" })),
  envelope({ ...messageEvent({ text: `<@${BOT}> hi` }), type: "app_mention" }),
  envelope(fileShareEvent(), { authorizations: [{ user_id: BOT, is_bot: true }] }),
];

/** A description of what is wrong with a result, or undefined when it is one of the allowed shapes. */
function problem(result: SlackParseResult): string | undefined {
  switch (result.kind) {
    case "invalid":
      return undefined;
    case "ignored":
      return typeof result.why === "string" ? undefined : "ignored without a reason";
    case "url_verification":
      return typeof result.challenge === "string" ? undefined : "challenge is not a string";
    case "message": {
      const problems = inboundProblems(result.message);
      if (result.message.channel !== "slack") problems.push("channel is not slack");
      if (!result.idempotencyKey.endsWith(`:${result.message.messageId}`)) problems.push("key is not channel:ts");
      return problems.length > 0 ? problems.join("; ") : undefined;
    }
    default:
      return `unknown kind ${(result as { kind: unknown }).kind}`;
  }
}

test(`${RUNS} random and mutated Slack bodies never throw and always classify`, () => {
  const r = rng(SEED);
  const kinds: Record<string, number> = {};
  for (let i = 0; i < RUNS; i++) {
    const mode = i % 4;
    const seed = r.pick(SEEDS);
    // Inputs are built outside the try, so a throw below is the parser's own.
    const input = mode === 0 ? randomJson(r) : mode === 3 ? mutateBytes(r, seed) : mutateJson(r, seed);
    let result: SlackParseResult;
    try {
      if (input instanceof Uint8Array) result = parseSlackBody(input, { botUserId: BOT });
      else result = parseSlackEvent(input, mode === 1 ? {} : { botUserId: BOT });
    } catch (error) {
      throw new Error(`seed ${SEED}, run ${i}: parser threw ${error}`);
    }
    const wrong = problem(result);
    if (wrong) throw new Error(`seed ${SEED}, run ${i}: ${wrong}: ${JSON.stringify(result)}`);
    kinds[result.kind] = (kinds[result.kind] ?? 0) + 1;
  }
  // The mutations must reach every outcome, or the fuzzing is not exercising the parser.
  expect(Object.keys(kinds).sort()).toEqual(["ignored", "invalid", "message", "url_verification"]);
});
