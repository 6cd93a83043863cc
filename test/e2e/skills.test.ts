/**
 * Skills end to end with the compiled binary: the fake model proposes a
 * skill with a `propose_skill` tool call, the owner curates it with `/skills`
 * through the Telegram Bot API fake, and each decision is read where it
 * shows — in the system prompt (`instructions`) of the next model request,
 * in what `use_skill` returns, and in the folder on disk.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { User } from "grammy/types";
import { type FakeModel, reply } from "../fakes/model-server.ts";
import { ALICE, type TelegramFake } from "../fakes/telegram.ts";
import { ACP_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";

const start = e2eResources();

/** Allowed to talk to the assistant, not to command it. */
const CAROL: User = { id: 333333333, is_bot: false, first_name: "Carol", username: "carol", language_code: "en" };

const REPORT = `---
name: weekly-report
description: Write the owner's weekly report from the notes in reports/.
---

# Weekly report

1. Read every note in reports/ from the last seven days.
2. Group them by project; one bullet per outcome.
`;
const REPORT_CHANGED = REPORT.replace("Write the owner's weekly report", "Draft the weekly status email");
const HAND_MADE = `---
name: tidy-downloads
description: "Sort the downloads folder: move files into folders by type."
---

Move each file by its extension.
`;

const skillDir = (home: TestHome, name: string) => join(home.home, "workspace", "skills", name);

async function setup(options: { parkAfterDays?: number } = {}) {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "responses" }) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id), allowedUserIds: [String(ALICE.id), String(CAROL.id)] }) +
      'streaming = "off"\n' +
      ACP_OFF +
      (options.parkAfterDays !== undefined ? tomlTable("fermix_core.skills", { park_after_days: options.parkAfterDays }) : ""),
  );
  return { model, telegram, home, say: sender(telegram), start: () => start.daemon(home) };
}

/** Send `text` as `from` and return the bot's new messages in that chat. */
function sender(telegram: TelegramFake) {
  return async (text: string, from: User = ALICE): Promise<string> => {
    const before = telegram.visibleTexts(from.id).length;
    telegram.pushMessage(telegram.message.text(text, { from }));
    const texts = await telegram.waitForTexts(from.id, (t) => t.length > before, 10_000);
    return texts.slice(before).join("\n");
  };
}

/** The system prompt of the model's latest request. */
const lastPrompt = (model: FakeModel) => String(model.requests.at(-1)!.body.instructions);

/** An ordinary turn; returns its system prompt. */
async function promptAfter(model: FakeModel, say: (text: string) => Promise<string>, text = "hello"): Promise<string> {
  model.reply(reply.text("Sure."));
  await say(text);
  return lastPrompt(model);
}

describe("skills with the compiled binary", () => {
  test("propose → /skills lists it → approve: its description is in the next prompt and use_skill returns it; deny, archive and restore change the prompt; every change is in the history", async () => {
    const { model, telegram, home, say, start: run } = await setup();
    await run();

    // The agent proposes; the owner is told in the chat; nothing is offered yet.
    model.reply(
      reply.toolCall("propose_skill", { name: "weekly-report", content: REPORT, reason: "You ask for this report every Friday." }),
      reply.text("I wrote your report."),
    );
    const proposed = await say("write my weekly report from the notes");
    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("I wrote your report")), 10_000);
    expect(proposed).toContain("proposal #1");
    expect(proposed).toContain("/skills review 1");
    expect(JSON.stringify(model.requests[1]!.body.input)).toContain("proposal #1 is waiting for the owner's review");
    expect(existsSync(skillDir(home, "weekly-report"))).toBe(false);
    expect(await promptAfter(model, say)).not.toContain("weekly-report");

    const listed = await say("/skills");
    expect(listed).toContain("Pending proposals (1)");
    expect(listed).toMatch(/#1 new skill weekly-report: You ask for this report every Friday\./);

    // Someone else may talk to the assistant, but not decide about its skills.
    expect(await say("/skills approve 1", CAROL)).toContain("needs the owner");
    expect(await say("/skills")).toContain("Pending proposals (1)");

    const review = await say("/skills review 1");
    expect(review).toContain("a new skill weekly-report");
    expect(review).toContain("1. Read every note in reports/ from the last seven days.");
    expect(review).toContain("/skills approve 1");

    expect(await say("/skills approve 1")).toContain("Approved #1");
    expect(readFileSync(join(skillDir(home, "weekly-report"), "SKILL.md"), "utf8")).toBe(REPORT);
    expect(await say("/skills approve 1")).toContain("already been approved");

    // The next turn's prompt offers it; use_skill returns its text.
    model.reply(reply.toolCall("use_skill", { name: "weekly-report" }), reply.text("Here is the report."));
    await say("the weekly report again, please");
    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("Here is the report")), 10_000);
    const using = model.requests.at(-2)!;
    expect(String(using.body.instructions)).toContain("## Skills you have learnt");
    expect(String(using.body.instructions)).toContain("- weekly-report: Write the owner's weekly report from the notes in reports/.");
    const output = model.requests.at(-1)!.body.input!.find((i) => i.type === "function_call_output")!;
    expect(output.output).toContain("2. Group them by project; one bullet per outcome.");
    expect(await say("/skills")).toMatch(/Active \(1\)\s+\S+ weekly-report — used once/);

    // A change, denied: the prompt keeps the old description.
    model.reply(
      reply.toolCall("propose_skill", { name: "weekly-report", content: REPORT_CHANGED, reason: "You now want it as an email." }),
      reply.text("Noted."),
    );
    expect(await say("make the report an email from now on")).toContain("a change to the skill weekly-report (proposal #2)");
    // The turn's own answer follows the notice: wait for it, or it would be taken for the next command's reply.
    await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("Noted.")), 10_000);
    const diff = await say("/skills review 2");
    expect(diff).toContain("--- skills/weekly-report/SKILL.md (current)");
    expect(diff).toContain("-description: Write the owner's weekly report from the notes in reports/.");
    expect(diff).toContain("+description: Draft the weekly status email from the notes in reports/.");
    expect(await say("/skills deny 2")).toContain("Denied #2");
    let prompt = await promptAfter(model, say);
    expect(prompt).toContain("weekly-report: Write the owner's weekly report");
    expect(prompt).not.toContain("Draft the weekly status email");
    expect(readFileSync(join(skillDir(home, "weekly-report"), "SKILL.md"), "utf8")).toBe(REPORT);

    // Archive: kept on disk, no longer offered; restore brings it back.
    expect(await say("/skills archive weekly-report")).toContain("Archived");
    prompt = await promptAfter(model, say);
    expect(prompt).not.toContain("weekly-report");
    expect(prompt).not.toContain("Skills you have learnt");
    expect(existsSync(join(skillDir(home, "weekly-report"), "SKILL.md"))).toBe(true);
    expect(await say("/skills")).toMatch(/Archived \(1\)\s+\S+ weekly-report/);
    model.reply(reply.toolCall("use_skill", { name: "weekly-report" }), reply.text("ok"));
    await say("use the report skill");
    expect(JSON.stringify(model.requests.at(-1)!.body.input)).toContain("is archived: it is not offered now");
    expect(await say("/skills restore weekly-report")).toContain("Restored");
    expect(await promptAfter(model, say)).toContain("- weekly-report: Write the owner's weekly report");

    // A skill dropped into the folder by hand is offered at the next turn, without a restart.
    mkdirSync(skillDir(home, "tidy-downloads"), { recursive: true });
    writeFileSync(join(skillDir(home, "tidy-downloads"), "SKILL.md"), HAND_MADE);
    expect(await promptAfter(model, say)).toContain("- tidy-downloads: Sort the downloads folder: move files into folders by type.");

    const history = await say("/skills history");
    const rows = history.split("\n").filter((line) => / · /.test(line));
    const changes = rows.map((row) => row.split(" · ").slice(1, 3).join(" · "));
    expect(changes).toEqual([
      "weekly-report · proposed by the assistant (telegram:111111111)",
      "weekly-report · approved by the owner (telegram:111111111)",
      "weekly-report · proposed by the assistant (telegram:111111111)",
      "weekly-report · denied by the owner (telegram:111111111)",
      "weekly-report · archived by the owner (telegram:111111111)",
      "weekly-report · restored by the owner (telegram:111111111)",
      "tidy-downloads · found on disk",
    ]);
  }, 90_000);

  test("a skill unused for park_after_days is parked automatically (gone from the prompt) and /skills unpark brings it back", async () => {
    // Three seconds.
    const parkAfterMs = 3000;
    const { model, home, say, start: run } = await setup({ parkAfterDays: parkAfterMs / 86_400_000 });
    mkdirSync(skillDir(home, "tidy-downloads"), { recursive: true });
    writeFileSync(join(skillDir(home, "tidy-downloads"), "SKILL.md"), HAND_MADE);
    await run();

    expect(await promptAfter(model, say)).toContain("- tidy-downloads:");
    // The skill was recorded before that turn's prompt listed it: unused for park_after_days once this much time is past.
    const listedBy = Date.now();
    await until("the skill's park time", () => Date.now() > listedBy + parkAfterMs, parkAfterMs + 5000);
    expect(await promptAfter(model, say)).not.toContain("tidy-downloads");
    expect(await say("/skills")).toMatch(/Parked \(unused too long\) \(1\)\s+\S+ tidy-downloads — never used .*\/skills unpark tidy-downloads/);
    expect(await say("/skills restore tidy-downloads")).toContain("is parked, not archived");

    expect(await say("/skills unpark tidy-downloads")).toContain("Unparked");
    expect(await promptAfter(model, say)).toContain("- tidy-downloads:");
    const history = await say("/skills history tidy-downloads");
    expect(history).toMatch(/tidy-downloads · parked automatically · unused for 3 seconds/);
    expect(history).toMatch(/tidy-downloads · unparked by the owner/);
  }, 60_000);
});
