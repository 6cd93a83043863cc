/**
 * The one turn engine (src/gateway/turn/engine.ts), each kind of turn through
 * the real core against the fake model: a conversation turn, /background
 * work and a scheduled job's run that fail the same way show the user the
 * same class message (never the provider's words), and each reaches the
 * provider's health; a refused key inside a 200 stream reads as the key, not
 * an outage; the step-limit note is said once; /stop leaves a scheduled
 * job's run going; the "still waiting" status shows whenever the model falls
 * silent, not only before its first word.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import { presenterFor } from "../../src/gateway/presenter.ts";
import { FAULT_MESSAGES, STEP_LIMIT_NOTE } from "../../src/gateway/turn/faults.ts";
import { reply } from "../fakes/model-server.ts";
import { type Harness, startHarness, until } from "../helpers/gateway.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** Make the one pending job due now and let the scheduler run it. */
function runDueJob(): void {
  h.core.scheduler.start();
  h.core.db.run("UPDATE jobs SET due_at = ?1", [Date.now() + 50]);
  h.core.scheduler.wake();
}

/** Schedule a job in the conversation (the model calls the tool), then answer the turn. */
async function scheduleJob(request: string): Promise<void> {
  h.fake.reply(reply.toolCall("schedule", { when: "in 1 hour", request }), reply.text("Scheduled."));
  await h.ingest({ text: `please ${request}` });
}

/** The primary's state in health: ready until a request failed. */
const providerHealth = () => h.core.agents.providerStates().get(h.core.agents.primary!.name) ?? { status: "ready" as const, fault: undefined };
/** Markdown as the Telegram chat shows it. */
const shown = (markdown: string) => presenterFor(profileOf).render(markdown, "telegram").parts[0]!.text;
const UPSTREAM_WORDS = "upstream says: the user +15551234567 wrote 'secret plans'";

describe("one class message for every kind of turn, and each reaches health", () => {
  const cases = [
    { name: "an HTTP 500", fail: () => reply.status(500, UPSTREAM_WORDS), fault: "server" as const },
    { name: "a refused key (HTTP 401)", fail: () => reply.status(401, UPSTREAM_WORDS, undefined, "invalid_api_key"), fault: "auth" as const },
    { name: "a refused key inside a 200 stream", fail: () => reply.error(UPSTREAM_WORDS, "invalid_api_key"), fault: "auth" as const },
  ];
  for (const { name, fail, fault } of cases) {
    test(name, async () => {
      h = await startHarness();
      const told: string[] = [];
      const healthAfter: Array<string | undefined> = [];
      const reset = async () => {
        // A success between the failures puts the provider back to ready, so each failure is seen on its own.
        h.fake.reply(reply.text("fine"));
        await h.ingest({ text: "are you there?" });
        expect(providerHealth().status).toBe("ready");
      };

      // A conversation turn.
      h.fake.reply(fail());
      expect(await h.ingest({ text: "hello" })).toBe("failed");
      told.push(h.telegram.texts().at(-1)!);
      healthAfter.push(providerHealth().fault?.fault);
      await reset();

      // /background work.
      h.fake.reply(fail());
      await h.ingest({ text: "/bg work it out" });
      const bg = await h.telegram.waitForText((t) => t.includes("Background task #1"));
      told.push(bg);
      await until(() => providerHealth().status === "degraded", "the background failure in health");
      healthAfter.push(providerHealth().fault?.fault);
      await reset();

      // A scheduled job's run.
      await scheduleJob("check the weather");
      h.fake.reply(fail());
      runDueJob();
      told.push(await h.telegram.waitForText((t) => t.includes("Scheduled job #1")));
      await until(() => h.core.jobs.get(1)?.state !== "pending" && h.core.jobs.get(1)?.state !== "running", "the run to end");
      healthAfter.push(providerHealth().fault?.fault);

      const message = FAULT_MESSAGES[fault];
      expect(told[0]).toBe(shown(message));
      expect(told[1]).toBe(shown(`**Background task #1 failed**\n\n${message}`));
      expect(told[2]).toBe(shown(`⏰ _Scheduled job #1_\n\n_It could not run._ ${message}`));
      for (const text of told) {
        expect(text).not.toContain("+15551234567");
        expect(text).not.toContain("secret plans");
      }
      expect(healthAfter).toEqual([fault, fault, fault]);
      expect(h.eventsNamed("turn.failed").map((e) => e.metadata)).toEqual([
        { channel: "telegram", kind: "conversation", class: fault },
        { channel: "telegram", kind: "background", class: fault },
        { channel: "telegram", kind: "scheduled", class: fault },
      ]);
    });
  }
});

test("the step-limit note closes the answer once, in a conversation turn and in a job's run alike", async () => {
  h = await startHarness();
  await scheduleJob("dig through the archive");
  // A model that never stops calling tools.
  h.fake.fallback(reply.toolCall("recall", { query: "anything" }, { text: ["Looking…"] }));
  await h.ingest({ text: "dig forever" });
  const answer = h.telegram.texts().at(-1)!;
  runDueJob();
  const run = await h.telegram.waitForText((t) => t.includes("Scheduled job #1"));
  for (const text of [answer, run]) {
    expect(text.split("too many tool steps").length - 1).toBe(1);
    expect(text.endsWith(shown(STEP_LIMIT_NOTE))).toBe(true);
  }
});

test("/stop in the job's conversation stops the conversation's reply but leaves a scheduled job's run going", async () => {
  h = await startHarness();
  await scheduleJob("summarise the news");
  // The run's answer streams slowly: /stop arrives while its model request is in flight.
  h.fake.reply(reply.slow(400, "Here is the news ", "summary."));
  runDueJob();
  await h.fake.waitForRequests(3);
  await h.ingest({ text: "/stop" });
  expect(h.telegram.texts().at(-1)).toStartWith("Nothing was running.");
  expect(await h.telegram.waitForText((t) => t.includes("news summary"))).toBe("⏰ <i>Scheduled job #1</i>\n\nHere is the news summary.");
  await until(() => h.core.jobs.get(1)?.state === "done", "the run to be done");
});
