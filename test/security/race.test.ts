/**
 * The file tools against a tree that changes under them, from outside, with
 * the compiled binary. A separate process (swap-loop.ts) exchanges a real
 * folder of the workspace with a symbolic link in a tight loop — `d/` with a
 * link to the Fermix home, `e/` with a link to the workspace itself — while
 * the fake model has the owner's file tools hit paths under them in several
 * Telegram chats at once: reads, writes, edits, listings, searches and
 * attachments, thousands of calls. A tool that checks a path and then opens
 * it again reads the home's secrets or writes into the home, SOUL.md or
 * skills/ whenever the swap lands between the two.
 *
 * What an attacker would notice, and what is counted: a tool output or a
 * sent file carrying the secret planted in the Fermix home (or a listing of
 * the home), a file the model wrote appearing in the home, the home's file
 * edited, SOUL.md or skills/ changed. Every count must be zero; the test also
 * checks that the race was live (the loop swapped, and the tools saw the
 * folder both as itself and as the link).
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, reply, type ToolCallSpec } from "../fakes/model-server.ts";
import { ALICE, groupChat } from "../fakes/telegram.ts";
import { ACP_OFF, providerToml, telegramToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();

/** Conversations at once (Telegram groups the owner writes in). */
const CHATS = 5;
/** Tool calls in each model response, and rounds of them per turn (the agent allows 8 steps: 7 rounds, then the answer). */
const BATCH = 60;
const ROUNDS = 7;
const SECRET = `RACE-SECRET-${crypto.randomUUID()}`;
const PROVIDER_KEY = `sk-race-provider-key-${crypto.randomUUID().slice(0, 8)}`;

/** One round of calls, the kinds in turn; `n` numbers what it writes so every write is traceable. */
function batch(first: number): ToolCallSpec[] {
  const kinds = [
    (): ToolCallSpec => ({ name: "read_file", arguments: { path: "d/planted.txt" } }),
    (n: number): ToolCallSpec => ({ name: "write_file", arguments: { path: `d/race-w-${n}.txt`, content: `written by call ${n}\n` } }),
    (): ToolCallSpec => ({ name: "edit_file", arguments: { path: "d/edit-me.txt", old_string: "marker", new_string: "marker!" } }),
    (): ToolCallSpec => ({ name: "list_dir", arguments: { path: "d" } }),
    (): ToolCallSpec => ({ name: "search_files", arguments: { path: "d", content: "RACE-SECRET" } }),
    (n: number): ToolCallSpec => ({ name: "write_file", arguments: { path: "e/SOUL.md", content: `# Evil soul ${n}\n` } }),
    (): ToolCallSpec => ({ name: "edit_file", arguments: { path: "e/SOUL.md", old_string: "marker", new_string: "marker!" } }),
    (n: number): ToolCallSpec => ({ name: "write_file", arguments: { path: `e/skills/race-s-${n}.md`, content: "evil skill\n" } }),
    (): ToolCallSpec => ({ name: "read_file", arguments: { path: "d/sub/planted.txt" } }),
    (): ToolCallSpec => ({ name: "search_files", arguments: { content: "RACE-SECRET" } }),
  ];
  const calls: ToolCallSpec[] = [];
  for (let i = 0; i < BATCH; i++) {
    const n = first + i;
    // One attachment per round: each is a real upload to the Telegram fake, and a caption of its own keeps the duplicate cache out of the way.
    calls.push(i === 0 ? { name: "send_attachment", arguments: { path: "d/planted.txt", caption: `c${n}` } } : kinds[i % kinds.length]!(n));
    calls[i]!.callId = `call_${n}`;
    calls[i]!.pieces = 1;
  }
  return calls;
}

/** Every tool output the model was handed, by call id (later requests repeat earlier ones). */
function toolOutputs(requests: RecordedRequest[]): Map<string, { name: string; output: string }> {
  const names = new Map<string, string>();
  const outputs = new Map<string, { name: string; output: string }>();
  for (const request of requests) {
    for (const item of request.body.input ?? []) {
      if (item.type === "function_call") names.set(item.call_id!, item.name!);
      if (item.type === "function_call_output") outputs.set(item.call_id!, { name: names.get(item.call_id!) ?? "?", output: item.output ?? "" });
    }
  }
  return outputs;
}

/** Every entry under `dir` (relative paths, sorted), links not followed, skipping the folders named in `skip`. */
function tree(dir: string, skip: string[] = [], prefix = ""): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (skip.includes(path)) continue;
    out.push(path);
    if (entry.isDirectory()) out.push(...tree(join(dir, entry.name), skip, path));
  }
  return out.sort();
}

test("thousands of file-tool calls while a folder is swapped with a link: nothing of the home leaks, nothing lands in it, SOUL.md and skills/ stay", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "responses", apiKey: PROVIDER_KEY }) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      ACP_OFF,
  );

  // The Fermix home holds the secret; the workspace a decoy of the same names.
  const fermixHome = home.home;
  const workspace = join(fermixHome, "workspace");
  writeFileSync(join(fermixHome, "planted.txt"), `${SECRET}\n`);
  writeFileSync(join(fermixHome, "edit-me.txt"), `${SECRET} marker\n`);
  mkdirSync(join(fermixHome, "sub"));
  writeFileSync(join(fermixHome, "sub", "planted.txt"), `${SECRET}\n`);
  mkdirSync(join(workspace, "skills"), { recursive: true });
  writeFileSync(join(workspace, "SOUL.md"), "# Soul\n\nYou are Fermix. marker\n");
  mkdirSync(join(workspace, "d", "sub"), { recursive: true });
  writeFileSync(join(workspace, "d", "planted.txt"), "decoy\n");
  writeFileSync(join(workspace, "d", "edit-me.txt"), "decoy marker\n");
  writeFileSync(join(workspace, "d", "sub", "planted.txt"), "decoy\n");
  symlinkSync(fermixHome, join(workspace, "d-swap"));
  mkdirSync(join(workspace, "e", "skills"), { recursive: true });
  writeFileSync(join(workspace, "e", "SOUL.md"), "# decoy soul marker\n");
  symlinkSync(workspace, join(workspace, "e-swap"));

  let calls = 0;
  model.fallback((request) => {
    const rounds = (request.body.input ?? []).filter((i) => i.type === "function_call").length / BATCH;
    if (rounds >= ROUNDS) return reply.text("race round done");
    const first = calls;
    calls += BATCH;
    return reply.toolCalls(...batch(first));
  });
  const daemon = await start.daemon(home);
  const soulBefore = readFileSync(join(workspace, "SOUL.md"), "utf8");
  const skillsBefore = tree(join(workspace, "skills"));
  const homeBefore = tree(fermixHome, ["workspace", "spool"]);

  // The owner switches the changing tools on in each group (confirmed there), so every file tool is offered to the turns.
  const chats = Array.from({ length: CHATS }, (_, i) => groupChat({ id: -1001000000001 - i, title: `race ${i}` }));
  for (const chat of chats) {
    telegram.pushMessage(telegram.message.text("/sandbox chat on", { chat }));
    await telegram.waitForTexts(chat.id, (texts) => texts.some((t) => t.includes("/confirm")), 10_000);
    const code = /\/confirm ([A-Z0-9]{8})/.exec(telegram.visibleTexts(chat.id).find((t) => t.includes("/confirm"))!)![1];
    telegram.pushMessage(telegram.message.text(`/confirm ${code}`, { chat }));
    await telegram.waitForTexts(chat.id, (texts) => texts.some((t) => t.startsWith("On: in this chat")), 10_000);
  }

  // The attacker: swapping until the stop file appears.
  const stopFile = join(home.home, "..", "stop-swapping");
  const swapper = Bun.spawn(
    [
      process.execPath,
      join(import.meta.dir, "swap-loop.ts"),
      stopFile,
      join(workspace, "d"),
      join(workspace, "d-swap"),
      join(workspace, "e"),
      join(workspace, "e-swap"),
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  start.defer(() => {
    if (swapper.exitCode === null) swapper.kill("SIGKILL");
  });

  for (const chat of chats) telegram.pushMessage(telegram.message.text("tidy the d folder", { chat }));
  for (const chat of chats) await telegram.waitForTexts(chat.id, (texts) => texts.some((t) => t.includes("race round done")), 120_000);

  writeFileSync(stopFile, "");
  const swapped = JSON.parse(await new Response(swapper.stdout).text()) as { swaps: number; failures: number };
  await daemon.stop();

  const outputs = [...toolOutputs(model.requests).values()];
  const leaked = outputs.filter((o) => o.output.includes(SECRET) || o.output.includes(PROVIDER_KEY) || o.output.includes("fermix.db"));
  const sentFiles = telegram.calls("sendDocument").flatMap((r) => r.files.map((f) => new TextDecoder().decode(f.bytes)));
  const leakedFiles = sentFiles.filter((text) => text.includes(SECRET));
  const homeAfter = tree(fermixHome, ["workspace", "spool"]);
  const writtenIntoHome = homeAfter.filter((p) => !homeBefore.includes(p) && /race-/.test(p));
  const homeEdited = readFileSync(join(fermixHome, "edit-me.txt"), "utf8") !== `${SECRET} marker\n`;
  const soulChanged = readFileSync(join(workspace, "SOUL.md"), "utf8") !== soulBefore;
  const skillsAfter = tree(join(workspace, "skills"));
  const byKind = (name: string) => outputs.filter((o) => o.name === name);
  const reads = byKind("read_file");
  const figures = {
    calls: outputs.length,
    swaps: swapped.swaps,
    readsOk: reads.filter((o) => o.output === "decoy\n").length,
    readsRefused: reads.filter((o) => o.output.startsWith("error:")).length,
    leakedOutputs: leaked.length,
    leakedFiles: leakedFiles.length,
    writtenIntoHome: writtenIntoHome.length,
    homeEdited,
    soulChanged,
    skillsAdded: skillsAfter.filter((p) => !skillsBefore.includes(p)).length,
  };
  console.log(`race figures: ${JSON.stringify(figures)}`);

  // The race was live: thousands of calls, the loop swapping all along, and the tools met the folder in both states.
  expect(outputs.length).toBe(CHATS * ROUNDS * BATCH);
  expect(swapped.swaps).toBeGreaterThan(1000);
  expect(figures.readsOk).toBeGreaterThan(0);
  expect(figures.readsRefused).toBeGreaterThan(0);
  expect(sentFiles.length).toBeGreaterThan(0);
  // And nothing crossed.
  expect(leaked.map((o) => `${o.name}: ${o.output.slice(0, 200)}`)).toEqual([]);
  expect(leakedFiles).toEqual([]);
  expect(writtenIntoHome).toEqual([]);
  expect(homeEdited).toBe(false);
  expect(soulChanged).toBe(false);
  expect(skillsAfter).toEqual(skillsBefore);
  expect(daemon.logs()).not.toContain(SECRET);
}, 180_000);
