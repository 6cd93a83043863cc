/**
 * `/sandbox` and the agent's access requests as a chat user sees them: the
 * in-process core against the fake model, channels that record what they
 * were asked to send.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfirmationStore } from "../../src/store/confirmations.ts";
import { lastToolOutput, reply } from "../fakes/model-server.ts";
import {
  DEFAULT_CHANNELS_TOML,
  type Harness,
  RecordingChannel,
  startHarness,
  TELEGRAM_FRIEND,
  TELEGRAM_LIKE,
  TELEGRAM_OWNER,
  toolNames,
  until,
  within,
} from "../helpers/gateway.ts";

let h: Harness;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder in $HOME (the preload's scratch home) and one outside it, each with a file. */
function folders() {
  const home = process.env.HOME!;
  const inside = realpathSync(mkdtempSync(join(home, "docs-")));
  const outside = realpathSync(mkdtempSync(join("/var/tmp", "fermix-data-")));
  dirs.push(inside, outside);
  writeFileSync(join(inside, "letter.txt"), "dear owner\n");
  writeFileSync(join(outside, "report.txt"), "quarterly numbers\n");
  return { inside, outside };
}

const last = () => h.telegram.texts().at(-1) ?? "";
const tokenIn = (text: string) => /\/confirm ([A-Z0-9]{8})/.exec(text)?.[1];
/** The output the model was given for its last tool call, in a recorded request. */
describe("/sandbox", () => {
  test("shows the state; a read-only grant in the home applies at once; /revoke takes it back", async () => {
    h = await startHarness();
    const { inside } = folders();
    await h.ingest({ text: "/sandbox" });
    expect(last()).toContain("Network for commands: off");
    expect(last()).toContain("Grants</b>\n\n• none");
    await h.ingest({ text: `/grant ${inside}` });
    expect(last()).toContain(`Granted: read-only access to ${inside}`);
    expect(h.core.sandbox.control.store.grants()).toEqual([expect.objectContaining({ path: inside, mode: "ro", grantedBy: `telegram:${TELEGRAM_OWNER}` })]);
    await h.ingest({ text: "/sandbox" });
    expect(last()).toContain(`<code>${inside}</code> read-only — by telegram:${TELEGRAM_OWNER}`);
    await h.ingest({ text: `/revoke ${inside}` });
    expect(last()).toContain("Revoked");
    expect(h.core.sandbox.control.store.grants()).toEqual([]);
    expect(h.fake.requests).toHaveLength(0);
  });

  test("a risky change is a proposal: the owner confirms it once, in the same conversation", async () => {
    h = await startHarness();
    const { outside } = folders();
    await h.ingest({ text: `/sandbox grant ${outside} rw` });
    const proposal = last();
    expect(proposal).toContain("Risky change");
    expect(proposal).toContain("outside your home directory");
    const token = tokenIn(proposal)!;
    expect(token).toBeDefined();
    expect(h.core.sandbox.control.store.grants()).toEqual([]);

    // Another allowed user: the command is the owner's.
    await h.ingest({ senderId: TELEGRAM_FRIEND, text: `/confirm ${token}` });
    expect(last()).toContain("owner");
    // The owner, in another conversation.
    await h.ingest({ chatId: "c2", text: `/confirm ${token}` });
    expect(h.telegram.texts("c2").at(-1)).toContain("another conversation");
    expect(h.core.sandbox.control.store.grants()).toEqual([]);

    await h.ingest({ text: `/confirm ${token}` });
    expect(last()).toContain(`Granted: read-write access to ${outside}`);
    expect(h.core.sandbox.control.store.grants()).toEqual([expect.objectContaining({ path: outside, mode: "rw" })]);
    await h.ingest({ text: `/confirm ${token}` });
    expect(last()).toContain("already used");
  });

  test("a code past confirm_ttl_seconds is refused as expired", async () => {
    h = await startHarness({ toml: `${DEFAULT_CHANNELS_TOML}\n[fermix_core.sandbox]\nconfirm_ttl_seconds = 1\n` });
    await h.ingest({ text: "/sandbox network on" });
    const token = tokenIn(last())!;
    expect(last()).toContain("within 1 second.");
    const { expiresAt } = new ConfirmationStore(h.core.db).get(token)!;
    await until(() => Date.now() > expiresAt, "the code's expiry time", 5000);
    await h.ingest({ text: `/confirm ${token}` });
    expect(last()).toContain("expired");
    expect(h.core.sandbox.control.store.network()).toBeUndefined();
  });

  test("network, env and presets: safe changes apply, risky ones wait for /confirm", async () => {
    h = await startHarness();
    const { store } = h.core.sandbox.control;
    await h.ingest({ text: "/sandbox env set GREETING=hello world" });
    expect(store.env()).toEqual([expect.objectContaining({ name: "GREETING", rule: "set", value: "hello world" })]);
    await h.ingest({ text: "/sandbox env deny LANG" });
    await h.ingest({ text: "/sandbox env set OPENAI_API_KEY=sk-proposed-secret-000000" });
    expect(last()).toContain("looks like a credential");
    expect(store.env().map((r) => r.name)).toEqual(["GREETING", "LANG"]);
    await h.ingest({ text: `/confirm ${tokenIn(last())}` });
    expect(store.env().map((r) => r.name)).toEqual(["GREETING", "LANG", "OPENAI_API_KEY"]);
    await h.ingest({ text: "/sandbox" });
    expect(last()).toContain("set OPENAI_API_KEY=••••••");
    expect(last()).not.toContain("sk-proposed-secret");

    await h.ingest({ text: "/sandbox preset on git" });
    expect(store.presets()).toEqual(["git"]);
    await h.ingest({ text: "/sandbox preset on node" });
    expect(last()).toContain("network on");
    expect(store.presets()).toEqual(["git"]);
    await h.ingest({ text: "/sandbox network on" });
    await h.ingest({ text: `/confirm ${tokenIn(last())}` });
    expect(store.network()).toBe(true);
    await h.ingest({ text: "/sandbox network off" });
    expect(store.network()).toBe(false);
    await h.ingest({ text: "/sandbox bogus" });
    expect(last()).toContain('unknown subcommand "bogus"');
  });

  test("the Fermix home, and whatever holds it, is never granted", async () => {
    h = await startHarness();
    for (const path of [h.home, join(h.home, "config.toml"), "/"]) {
      await h.ingest({ text: `/grant ${path}` });
      expect(last()).toContain("Not granted");
    }
    expect(h.core.sandbox.control.store.grants()).toEqual([]);
  });
});

describe("request_access in a turn", () => {
  test("the turn waits; /confirm from the same chat answers it at once, and the turn goes on with the access", async () => {
    h = await startHarness();
    const { outside } = folders();
    h.fake.reply(
      reply.toolCall("request_access", { path: outside, mode: "ro", reason: "to read the report you mentioned" }),
      reply.toolCall("read_file", { path: join(outside, "report.txt") }),
      reply.text("The report says: quarterly numbers."),
    );
    const turn = h.ingest({ text: "summarise my report" });
    const prompt = await h.telegram.waitForText((t) => t.includes("Access request"));
    expect(prompt).toContain(outside);
    expect(prompt).toContain("to read the report you mentioned");
    const token = tokenIn(prompt)!;
    expect(token).toBeDefined();
    expect(h.fake.requests).toHaveLength(1);
    expect(toolNames(h.fake.requests[0]!.body)).toEqual(expect.arrayContaining(["read_file", "run_command", "request_access"]));

    // Not queued behind the waiting turn: it answers while the turn is still running.
    expect(await within(h.ingest({ text: `/confirm ${token}` }), "the /confirm reply", 3000)).toBe("command");
    expect(h.telegram.texts().some((t) => t.includes("Approved"))).toBe(true);
    expect(await within(turn, "the waiting turn to finish")).toBe("answered");
    expect(lastToolOutput(h.fake.requests[1]!)).toStartWith("granted: read-only access");
    expect(lastToolOutput(h.fake.requests[2]!)).toBe("quarterly numbers\n");
    expect(last()).toContain("quarterly numbers");
  });

  test("an allowed user who is not the owner is offered no workspace tools", async () => {
    h = await startHarness();
    h.fake.reply(reply.text("hi"));
    await h.ingest({ senderId: TELEGRAM_FRIEND, text: "hello" });
    const names = toolNames(h.fake.requests[0]!.body);
    for (const name of ["read_file", "write_file", "edit_file", "list_dir", "search_files", "run_command", "request_access"]) expect(names).not.toContain(name);
  });

  test("unanswered, the turn goes on with timed out", async () => {
    h = await startHarness({ toml: `${DEFAULT_CHANNELS_TOML}\n[fermix_core.sandbox]\naccess_request_timeout_seconds = 1\n` });
    const { outside } = folders();
    h.fake.reply(reply.toolCall("request_access", { path: outside, mode: "rw", reason: "to save results" }), reply.text("No access, sorry."));
    expect(await within(h.ingest({ text: "save it there" }), "the turn", 8000)).toBe("answered");
    expect(lastToolOutput(h.fake.requests[1]!)).toStartWith("timed out");
    expect(h.core.sandbox.control.store.grants()).toEqual([]);
  });

  test("on a button channel in a group: Approve and Deny buttons, no code; only the owner's press counts", async () => {
    const buttons = new RecordingChannel({ ...TELEGRAM_LIKE, buttons: true });
    h = await startHarness({ channels: { telegram: buttons } });
    const { outside } = folders();
    h.fake.reply(reply.toolCall("request_access", { path: outside, mode: "ro", reason: "to read it" }), reply.text("Read it."));
    const group = "-100777";
    await switchOnGroupTools(buttons, group);
    const turn = h.ingest({ chatId: group, direct: false, text: "read my report" });
    await buttons.waitForText((t) => t.includes("Access request"));
    const prompt = buttons.actions.find((a) => a.kind === "text" && a.text.includes("Access request"));
    if (prompt?.kind !== "text") throw new Error("no prompt");
    expect(tokenIn(prompt.text)).toBeUndefined();
    expect(prompt.text).not.toMatch(/[A-HJKMNP-Z2-9]{8}/);
    expect(prompt.buttons?.map((b) => b.label)).toEqual(["✅ Approve", "✖️ Deny"]);
    const approve = prompt.buttons![0]!.data;

    const press = (senderId: string) => h.core.sandbox.press({ channel: "telegram", chatId: group, senderId, messageId: "m1", data: approve });
    const friend = await press(TELEGRAM_FRIEND);
    expect(friend.ok).toBe(false);
    expect(friend.text).toContain("not yours");
    const owner = await press(TELEGRAM_OWNER);
    expect(owner).toEqual({ ok: true, done: true, text: expect.stringContaining("Approved") });
    expect(await within(turn, "the waiting turn")).toBe("answered");
    expect(lastToolOutput(h.fake.requests[1]!)).toStartWith("granted");
    expect((await press(TELEGRAM_OWNER)).text).toContain("already used");
  });
});

test("a request asked in a group is answered from the owner's DM: /sandbox there shows the code, /confirm there approves", async () => {
  const buttons = new RecordingChannel({ ...TELEGRAM_LIKE, buttons: true });
  h = await startHarness({ channels: { telegram: buttons } });
  const { outside } = folders();
  h.fake.reply(reply.toolCall("request_access", { path: outside, mode: "ro", reason: "to read it" }), reply.text("Read it."));
  await switchOnGroupTools(buttons, "-100777");
  const turn = h.ingest({ chatId: "-100777", direct: false, text: "read my report" });
  await buttons.waitForText((t) => t.includes("Access request"));
  // In the group, /sandbox lists the request but not its code.
  await h.ingest({ chatId: "-100777", direct: false, text: "/sandbox" });
  expect(buttons.texts("-100777").at(-1)).toContain("the assistant asks for read-only access");
  expect(tokenIn(buttons.texts("-100777").at(-1)!)).toBeUndefined();
  // In the owner's DM (chat id = the owner's id), it shows the code, and the code works there.
  await h.ingest({ chatId: TELEGRAM_OWNER, text: "/sandbox" });
  const token = tokenIn(buttons.texts(TELEGRAM_OWNER).at(-1)!);
  expect(token).toBeDefined();
  await h.ingest({ chatId: TELEGRAM_OWNER, text: `/confirm ${token}` });
  expect(buttons.texts(TELEGRAM_OWNER).at(-1)).toContain("Approved");
  expect(await within(turn, "the waiting turn")).toBe("answered");
  expect(lastToolOutput(h.fake.requests[1]!)).toStartWith("granted");
});

/** `/sandbox chat on` in a group, confirmed there: the owner's turns in it may ask for access (and change and send things). */
async function switchOnGroupTools(channel: RecordingChannel, group: string): Promise<void> {
  await h.ingest({ chatId: group, direct: false, text: "/sandbox chat on" });
  const token = tokenIn(channel.texts(group).at(-1)!);
  if (!token) throw new Error("no code in the /sandbox chat on reply");
  await h.ingest({ chatId: group, direct: false, text: `/confirm ${token}` });
  expect(channel.texts(group).at(-1)).toContain("On: in this chat");
}

test("in a group the owner's turn only reads until /sandbox chat on is confirmed there; /sandbox chat off takes it back at once", async () => {
  h = await startHarness();
  h.fake.fallback(reply.text("ok"));
  const group = "-100555";
  const inGroup = { chatId: group, direct: false };
  await h.ingest({ ...inGroup, text: "hi" });
  expect(toolNames(h.fake.requests.at(-1)!.body)).toEqual(expect.arrayContaining(["read_file", "list_dir", "search_files", "remember"]));
  for (const name of ["write_file", "edit_file", "run_command", "send_attachment", "schedule", "request_access"]) {
    expect(toolNames(h.fake.requests.at(-1)!.body)).not.toContain(name);
  }
  await h.ingest({ ...inGroup, text: "/sandbox" });
  expect(h.telegram.texts(group).at(-1)).toContain("only reading tools");
  // Proposed only: still reading tools until the code is confirmed.
  await h.ingest({ ...inGroup, text: "/sandbox chat on" });
  const proposal = h.telegram.texts(group).at(-1)!;
  expect(proposal).toContain("Risky change");
  await h.ingest({ ...inGroup, text: "hi again" });
  expect(toolNames(h.fake.requests.at(-1)!.body)).not.toContain("write_file");
  await h.ingest({ ...inGroup, text: `/confirm ${tokenIn(proposal)}` });
  await h.ingest({ ...inGroup, text: "and now?" });
  expect(toolNames(h.fake.requests.at(-1)!.body)).toEqual(
    expect.arrayContaining(["write_file", "run_command", "send_attachment", "schedule", "request_access"]),
  );
  // Another group and the owner's direct chat are untouched by it.
  await h.ingest({ chatId: "-100666", direct: false, text: "elsewhere" });
  expect(toolNames(h.fake.requests.at(-1)!.body)).not.toContain("write_file");
  await h.ingest({ ...inGroup, text: "/sandbox chat off" });
  expect(h.telegram.texts(group).at(-1)).toContain("Off: in this chat");
  await h.ingest({ ...inGroup, text: "last one" });
  expect(toolNames(h.fake.requests.at(-1)!.body)).not.toContain("write_file");
  // In a direct chat there is nothing to switch.
  await h.ingest({ text: "/sandbox chat on" });
  expect(h.telegram.texts("c1").at(-1)).toContain("This is a direct chat");
});

test("run_command is not offered where the machine has no sandbox", async () => {
  h = await startHarness({ sandboxBackend: null });
  h.fake.reply(reply.text("ok"));
  await h.ingest({ text: "list my files" });
  const names = toolNames(h.fake.requests[0]!.body);
  expect(names).toContain("read_file");
  expect(names).not.toContain("run_command");
});
