/**
 * `/ultra` end to end with the compiled binary: the owner sends `/ultra …`
 * through the Telegram Bot API fake; the fake model tells the three phases
 * apart by the instructions of each request (planner, worker, merge) and
 * answers each in kind. What a person would notice: one planner request,
 * the planned workers at the same time, one merge that is told every part's
 * outcome, one merged answer with the footer in the chat, a status message
 * that goes away, `/stop` ending every open request at once, and a history
 * that holds the request and the answer, not the workers' chatter.
 */
import { describe, expect, test } from "bun:test";
import type { User } from "grammy/types";
import { type FakeModel, type RecordedRequest, type Reply, reply, userText } from "../fakes/model-server.ts";
import { ALICE, type TelegramFake } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import { within } from "../helpers/wait.ts";

const start = e2eResources();
/** After /stop of an ultra turn: a merge, an answer or a status edit that should not come would follow the workers' end within milliseconds. */
const NO_MERGE_MS = 1500;

/** Allowed to talk to the assistant, not to command it. */
const CAROL: User = { id: 333333333, is_bot: false, first_name: "Carol", username: "carol", language_code: "en" };

type Phase = "planner" | "worker" | "merge" | "normal";

/** Which phase a request is, by its instructions. */
function phaseOf(request: RecordedRequest): Phase {
  const instructions = String(request.body.instructions ?? "");
  if (instructions.includes("## Ultra mode: planning")) return "planner";
  if (instructions.includes("## Ultra mode: worker")) return "worker";
  if (instructions.includes("## Ultra mode: merging")) return "merge";
  return "normal";
}

const ofPhase = (model: FakeModel, phase: Phase) => model.requests.filter((r) => phaseOf(r) === phase);

const plan = (...tasks: string[]) => reply.text(JSON.stringify({ parts: tasks.map((task, i) => ({ title: `part ${i + 1}`, task })) }));

/** The fake model's replies by phase; a worker's reply is picked by its task. */
function phases(model: FakeModel, replies: { planner: Reply; worker: (task: string) => Reply; merge: Reply; normal?: Reply }) {
  model.fallback((request) => {
    const phase = phaseOf(request);
    if (phase === "worker") return replies.worker(userText(request));
    return replies[phase] ?? reply.text("ok");
  });
}

async function setup(options: { ultra?: Record<string, number>; streaming?: "off" | "draft" } = {}) {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "responses" }) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id), allowedUserIds: [String(ALICE.id), String(CAROL.id)] }) +
      (options.streaming ? `streaming = "${options.streaming}"\n` : "") +
      ACP_OFF +
      (options.ultra ? tomlTable("fermix_core.ultra", options.ultra) : ""),
  );
  const daemon = await start.daemon(home);
  return { model, telegram, home, daemon };
}

/** Send as the owner; resolves once the daemon has taken the message (asked for the next batch). */
async function send(telegram: TelegramFake, text: string, from: User = ALICE): Promise<number> {
  const [update] = telegram.pushMessage(telegram.message.text(text, { from }));
  await telegram.waitForRequest("getUpdates", (r) => Number(r.body.offset) > update!.update_id, 5000);
  return Date.now();
}

const statusMessages = (telegram: TelegramFake) =>
  telegram.botMessages(ALICE.id).filter((m) => [m.text ?? "", ...m.history].some((t) => t.includes("Ultra mode:")));

/** The texts of a model request's input messages, in order. */
const inputTexts = (request: RecordedRequest): string[] => {
  const messages = request.body.input!.filter((item) => item.role !== undefined);
  return messages.map((item) => `${item.role}: ${typeof item.content === "string" ? item.content : (item.content ?? []).map((c) => c.text ?? "").join("")}`);
};

describe("/ultra with the compiled binary", () => {
  test("one planner request, the planned workers at once, one merge; one merged answer with the footer; the status goes; history keeps request and answer", async () => {
    const { model, telegram } = await setup({ streaming: "draft" });
    phases(model, {
      planner: plan("Look into apples", "Look into pears", "Look into plums"),
      // Slow workers (~900 ms each): if they ran one after another, they could not overlap.
      worker: (task) => reply.slow(150, "Finding ", "for: ", task, ".", " Done", "."),
      merge: reply.text("Merged answer: ", "apples, pears and plums are all fruit."),
      normal: reply.text("A normal reply."),
    });

    await send(telegram, "/ultra compare apples, pears and plums");
    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("Merged answer")) && t.every((x) => !x.includes("Ultra mode:")), 20_000);

    const planners = ofPhase(model, "planner");
    const workers = ofPhase(model, "worker");
    const merges = ofPhase(model, "merge");
    expect(planners).toHaveLength(1);
    expect(workers).toHaveLength(3);
    expect(merges).toHaveLength(1);
    expect(model.requests).toHaveLength(5);
    expect(userText(planners[0]!)).toBe("compare apples, pears and plums");
    expect(workers.map(userText).sort()).toEqual(["Look into apples", "Look into pears", "Look into plums"]);
    // The workers ran at the same time: every one started before any finished.
    const lastStart = Math.max(...workers.map((w) => w.receivedAt));
    const firstEnd = Math.min(...workers.map((w) => w.finishedAt!));
    expect(lastStart).toBeLessThan(firstEnd);
    // Planner first, merge last, after every worker was done.
    expect(Math.min(...workers.map((w) => w.receivedAt))).toBeGreaterThanOrEqual(planners[0]!.finishedAt!);
    expect(merges[0]!.receivedAt).toBeGreaterThanOrEqual(Math.max(...workers.map((w) => w.finishedAt!)));
    // The workers have the turn's tools; the planner and the merge have none.
    expect(workers[0]!.body.tools!.length).toBeGreaterThan(0);
    expect(planners[0]!.body.tools).toBeUndefined();
    expect(merges[0]!.body.tools).toBeUndefined();
    // The merge is told every part's result.
    const mergeText = userText(merges[0]!);
    for (const fruit of ["apples", "pears", "plums"]) expect(mergeText).toContain(`Finding for: Look into ${fruit}. Done.`);
    expect(mergeText.match(/status="done"/g)).toHaveLength(3);

    // One merged answer in the chat, with the footer: 3 parts, 5 requests, 5 × 15 tokens.
    const answers = telegram.visibleTexts(ALICE.id).filter((t) => t.includes("Merged answer"));
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain("Merged answer: apples, pears and plums are all fruit.");
    expect(answers[0]).toContain("Ultra: 3 parts · 5 requests · 75 tokens");
    expect(telegram.visibleTexts(ALICE.id).join("\n")).not.toContain("Finding for");
    // The status showed the phases, then went when the answer landed.
    const status = statusMessages(telegram);
    expect(status).toHaveLength(1);
    const shown = [...status[0]!.history, status[0]!.text ?? ""].join("\n");
    expect(shown).toContain("planning");
    expect(shown).toMatch(/\d of 3 parts done/);
    expect(shown).toContain("merging");
    expect(status[0]!.deleted).toBe(true);

    // The next turn's history: the request and the merged answer, not the workers' chatter.
    await send(telegram, "thanks");
    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("A normal reply")), 10_000);
    const next = model.requests.at(-1)!;
    expect(phaseOf(next)).toBe("normal");
    const history = inputTexts(next);
    expect(history).toEqual([
      "user: compare apples, pears and plums",
      expect.stringContaining("assistant: Merged answer: apples, pears and plums are all fruit."),
      "user: thanks",
    ]);
  }, 60_000);

  test("a photo sent with /ultra is seen by the planner and by every part; the merge works from their results", async () => {
    const { model, telegram } = await setup();
    phases(model, {
      planner: plan("Read the left axis", "Read the right axis"),
      worker: (task) => reply.text(`Result for: ${task}.`),
      merge: reply.text("Merged answer: both axes read."),
    });
    const images = (request: RecordedRequest) =>
      request.body.input!.flatMap((item) => (item.role === "user" && Array.isArray(item.content) ? item.content.filter((c) => c.type === "input_image") : []));

    telegram.pushMessage(telegram.message.photo({ caption: "/ultra what does this chart say?" }));
    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("Merged answer")), 20_000);

    const [planner] = ofPhase(model, "planner");
    expect(userText(planner!)).toBe("what does this chart say?");
    expect(images(planner!)).toHaveLength(1);
    const workers = ofPhase(model, "worker");
    expect(workers).toHaveLength(2);
    for (const worker of workers) expect(images(worker)).toHaveLength(1);
    expect(images(ofPhase(model, "merge")[0]!)).toHaveLength(0);
  }, 60_000);

  test("/stop while the workers run aborts every open request within a second; nothing of the stopped turn is sent afterwards", async () => {
    const { model, telegram } = await setup();
    phases(model, {
      planner: plan("first", "second", "third", "fourth"),
      worker: () => reply.hang("Working on it"),
      merge: reply.text("should never be asked"),
      normal: reply.text("A fresh answer."),
    });

    await send(telegram, "/ultra do four things");
    await until("four workers", () => ofPhase(model, "worker").length === 4);
    const workers = ofPhase(model, "worker");
    const planner = ofPhase(model, "planner")[0]!;
    expect(planner.finishedAt).toBeDefined();
    await until("the status to show the work", () => statusMessages(telegram).some((m) => (m.text ?? "").includes("0 of 4 parts done")));

    const stopAt = await send(telegram, "/stop");
    const abortedAt = await Promise.all(
      workers.map((w) =>
        within(
          w.untilAborted.then(() => Date.now()),
          "each worker's model call to be aborted",
          5000,
        ),
      ),
    );
    for (const at of abortedAt) expect(at - stopAt).toBeLessThan(1000);

    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.startsWith("Stopped")), 10_000);
    expect(telegram.visibleTexts(ALICE.id).find((t) => t.startsWith("Stopped"))).toContain("1 running reply");
    // A merge that should not run would ask the model as soon as the last worker ended, at once.
    await Bun.sleep(NO_MERGE_MS);
    // No merge, no answer, and the status is gone.
    expect(ofPhase(model, "merge")).toHaveLength(0);
    expect(model.requests).toHaveLength(5);
    expect(telegram.visibleTexts(ALICE.id).filter((t) => t.includes("Ultra") || t.includes("should never"))).toEqual([]);
    expect(statusMessages(telegram).every((m) => m.deleted)).toBe(true);
    const stoppedAt = telegram.botMessages(ALICE.id).findIndex((m) => (m.text ?? "").startsWith("Stopped"));
    expect(telegram.botMessages(ALICE.id).slice(stoppedAt + 1)).toEqual([]);

    // The conversation goes on normally.
    await send(telegram, "hello again");
    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("A fresh answer")), 10_000);
  }, 60_000);

  test("a failing worker does not sink the turn: the merge is told which part failed, and the footer counts it", async () => {
    const { model, telegram } = await setup({ streaming: "off" });
    phases(model, {
      planner: plan("easy part", "broken part", "other part"),
      worker: (task) => (task === "broken part" ? reply.status(400, "fake model: this part is rejected") : reply.text(`Result of ${task}.`)),
      merge: reply.text("Here is what I found; one part is missing."),
    });

    await send(telegram, "/ultra do three things");
    const texts = await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("what I found")), 20_000);
    const merge = ofPhase(model, "merge");
    expect(merge).toHaveLength(1);
    const told = userText(merge[0]!);
    expect(told).toMatch(
      /<part number="2" title="part 2" status="failed">\nTask: broken part\n\nThis part failed: the model request failed \(rejected, HTTP 400\)/,
    );
    expect(told).toContain("Result of easy part.");
    expect(told).toContain("Result of other part.");
    expect(texts.find((t) => t.includes("what I found"))).toContain("Ultra: 3 parts (1 failed) · 5 requests");
  }, 60_000);

  test("past the token ceiling the parts not done are stopped and the merge works with what it has, and says so", async () => {
    const { model, telegram } = await setup({ streaming: "off", ultra: { max_tokens: 1000, concurrency: 1 } });
    phases(model, {
      planner: reply.stream({
        text: [
          JSON.stringify({
            parts: [
              { title: "a", task: "part a" },
              { title: "b", task: "part b" },
              { title: "c", task: "part c" },
            ],
          }),
        ],
        usage: { input: 500, output: 100 },
      }),
      worker: (task) => reply.stream({ text: [`Result of ${task}.`], usage: { input: 400, output: 100 } }),
      merge: reply.text("Partial answer."),
    });

    await send(telegram, "/ultra something big");
    const texts = await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("Partial answer")), 20_000);
    // One at a time: part a's 500 tokens took the turn past 1,000, so b and c never started.
    expect(ofPhase(model, "worker").map(userText)).toEqual(["part a"]);
    const merge = ofPhase(model, "merge")[0]!;
    expect(merge.body.instructions).toContain("token budget of this request ran out");
    expect(userText(merge)).toContain("Result of part a.");
    expect(userText(merge).match(/status="unfinished"/g)).toHaveLength(2);
    expect(texts.find((t) => t.includes("Partial answer"))).toContain("token budget of 1,000 reached: merged what was done");
  }, 60_000);

  test('on the command line: fermix ask "/ultra …" prints the merged answer with the footer, and no status lines', async () => {
    const model = await start.model();
    const home = start.home();
    home.writeConfig(providerToml(model.url, { api: "responses", apiKey: "sk-fake-0000" }) + CHANNELS_OFF);
    phases(model, { planner: plan("one", "two"), worker: (task) => reply.text(`did ${task}`), merge: reply.text("Both are done.") });
    const result = await runFermix(["ask", "/ultra do two things"], home.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("Both are done.");
    expect(result.stdout).toContain("Ultra: 2 parts · 4 requests · 60 tokens");
    expect(result.stdout).not.toContain("Ultra mode:");
    expect(model.requests.map(phaseOf)).toEqual(["planner", "worker", "worker", "merge"]);
  }, 30_000);

  test("/ultra is the owner's: an allowed user is told it needs the owner, and nothing reaches the model", async () => {
    const { model, telegram } = await setup();
    telegram.pushMessage(telegram.message.text("/ultra plan my week", { from: CAROL }));
    const texts = await telegram.waitForTexts(CAROL.id, (t) => t.length > 0, 10_000);
    expect(texts.join("\n")).toContain("needs the owner");
    expect(model.requests).toHaveLength(0);
  }, 30_000);
});
