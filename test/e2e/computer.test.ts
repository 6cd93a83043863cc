/**
 * Computer use with the compiled binary, on a virtual display under Xvfb:
 * Alice, the owner, asks on the Telegram fake; the fake model plays the
 * computer-use loop — with the `computer` function (any model) and with
 * OpenAI's native `computer` tool (a computer-use model) — and clicks into
 * the terminal on the display and types a command that writes a file the
 * test then finds. Every screenshot the model is given is a PNG of the
 * configured size, and the one after typing differs from the one before.
 *
 * `/pause` mid-loop refuses the next action (the model is told), nothing
 * more reaches the display, and Alice gets the screenshot; `/resume` and a
 * new instruction go on in the same session; `/stop` leaves no process of
 * it behind. A provider's safety check waits for Alice's Approve. An idle
 * session, and one the daemon's shutdown finds, are torn down; so is one
 * whose daemon is killed outright.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, reply, toolImages, toolOutputText, userText } from "../fakes/model-server.ts";
import { ALICE, type TelegramFake } from "../fakes/telegram.ts";
import { ACP_OFF, providerToml, telegramToml } from "../helpers/config.ts";
import { computerToml, dataUrlBytes, desktopProcesses, pngDimensions } from "../helpers/desktop.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();

/** The terminal's window is at (10, 10) and 80×20 characters: this point is inside it. */
const IN_TERMINAL = { x: 120, y: 120 };
/**
 * After a refused action: had it reached the display, the terminal would
 * have run the typed command (the file appears within a few hundred
 * milliseconds of Return); a second after the turn's last message holds that.
 */
const NOTHING_TYPED_MS = 1000;
/** While a safety check waits: an action that went on anyway would have written the file, and the model would have been asked again, within a second. */
const WAITING_MS = 1000;

async function computerDaemon(options: { model?: string; idleMinutes?: number; maxActions?: number; display?: "host"; env?: Record<string, string> } = {}) {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home(options.env);
  home.writeConfig(
    providerToml(model.url, { model: options.model ?? "fake-model" }) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      ACP_OFF +
      computerToml({ idleMinutes: options.idleMinutes, maxActions: options.maxActions }) +
      (options.display ? `display = "${options.display}"\n` : ""),
  );
  const daemon = await start.daemon(home);
  const data = start.dataFolder();
  return { model, telegram, home, daemon, data };
}

/** Alice writes to the bot in her direct chat; resolves once the daemon has taken it. */
async function say(telegram: TelegramFake, text: string): Promise<void> {
  const [update] = telegram.pushMessage(telegram.message.text(text));
  await telegram.waitForRequest("getUpdates", (r) => Number(r.body.offset) > update!.update_id, 5000);
}

/** The photos the bot sent Alice, in order: caption and size. */
function photos(telegram: TelegramFake): Array<{ caption: string; size: { width: number; height: number } }> {
  return telegram
    .calls("sendPhoto")
    .filter((call) => String(call.body.chat_id) === String(ALICE.id))
    .map((call) => ({ caption: String(call.body.caption ?? ""), size: pngDimensions(call.files[0]!.bytes) }));
}

/** Every screenshot the model was given in `request`, decoded: each a PNG of `width`×`height`. */
function screenshots(request: RecordedRequest, width: number, height: number): Uint8Array[] {
  return toolImages(request).map((image) => {
    const bytes = dataUrlBytes(image.url);
    expect(pngDimensions(bytes)).toEqual({ width, height });
    return bytes;
  });
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

/** The last function call output of a request. */
const lastOutput = (request: RecordedRequest) => toolOutputText((request.body.input ?? []).filter((i) => i.type === "function_call_output").at(-1) ?? {});

test("the function tool: click into the terminal and type; /pause refuses the next action, /resume goes on in the same session, /stop ends it", async () => {
  const { model, telegram, home, data } = await computerDaemon();
  const first = join(data, "first.txt");
  const paused = join(data, "paused.txt");
  const resumed = join(data, "resumed.txt");
  let release!: () => void;
  const pauseSent = new Promise<void>((resolve) => (release = resolve));
  model.reply(
    reply.toolCall("computer", { action: "screenshot" }),
    reply.toolCall("computer", { action: "click", ...IN_TERMINAL }),
    reply.toolCall("computer", { action: "type", text: `echo typed > ${first}` }),
    reply.toolCall("computer", { action: "key", keys: "Return" }),
    // The model's next action is held until Alice has paused the desktop.
    reply.after(pauseSent, reply.toolCall("computer", { action: "type", text: `echo paused > ${paused}\n` })),
    reply.text("Understood, I stopped."),
  );

  await say(telegram, "Write the word typed into first.txt with the terminal");
  const [, , clicked, typed, returned] = await model.waitForRequests(5, 20_000);
  await until("the typed command wrote its file", () => existsSync(first));

  // The model saw the screen after every action, as PNGs of the display's size; typing changed it.
  const shots = screenshots(returned!, 640, 400);
  expect(shots).toHaveLength(4);
  const afterClick = screenshots(clicked!, 640, 400).at(-1)!;
  const afterType = screenshots(typed!, 640, 400).at(-1)!;
  expect(same(afterClick, afterType)).toBe(false);
  expect(lastOutput(returned!)).toStartWith("done: key");
  // Alice was shown the session when it started.
  expect(photos(telegram)[0]).toEqual({ caption: expect.stringContaining("Desktop session started"), size: { width: 640, height: 400 } });
  const before = desktopProcesses(home.home);
  expect(before.map((p) => p.command).join(" ")).toContain("Xvfb");

  // /pause runs at once, while the turn waits for the model.
  await say(telegram, "/pause");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("⏸ Paused")), 5000);
  await until("the pause screenshot reached Alice", () => photos(telegram).some((p) => p.caption.includes("as you paused it")));
  release();

  // The held action is refused, the model is told so, and the turn ends with its last word and a note.
  const [, , , , , afterRefusal] = await model.waitForRequests(6, 10_000);
  expect(lastOutput(afterRefusal!)).toContain("paused by the owner");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("Understood, I stopped.") && t.includes("/resume")), 10_000);
  await Bun.sleep(NOTHING_TYPED_MS);
  expect(existsSync(paused)).toBe(false);
  expect(model.requests).toHaveLength(6);

  // /resume starts nothing by itself; the next instruction goes on in the same session: same display, same terminal.
  await say(telegram, "/resume");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("▶️ Resumed")), 5000);
  expect(model.requests).toHaveLength(6);
  model.reply(reply.toolCall("computer", { action: "type", text: `echo resumed > ${resumed}\n` }), reply.text("Resumed and done."));
  await say(telegram, "Now write resumed.txt");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t === "Resumed and done."), 10_000);
  await until("the command typed after /resume wrote its file", () => existsSync(resumed));
  // (A screenshot or xdotool call of the moment may show up beside them: those come and go.)
  const after = desktopProcesses(home.home);
  expect(after.map((p) => p.pid)).toEqual(expect.arrayContaining(before.map((p) => p.pid)));
  expect(after.filter((p) => p.command.endsWith("Xvfb"))).toEqual(before.filter((p) => p.command.endsWith("Xvfb")));
  // The turn that used the desktop ended: Alice got the screen as it left it.
  await until("the end-of-turn screenshot reached Alice", () => photos(telegram).some((p) => p.caption.includes("after this turn")));

  // /tasks lists the session, with its action count.
  await say(telegram, "/tasks");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("Desktop") && t.includes("5 actions")), 5000);

  // /stop tears it down: no Xvfb, window manager, terminal or shell of it is left.
  await say(telegram, "/stop");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("Stopped") && t.includes("the desktop session")), 10_000);
  await until("no process of the session is left", () => desktopProcesses(home.home).length === 0, 5000);
  expect(readdirSync(join(home.home, "desktop"))).toEqual([]);
  for (const { pid } of before) expect(existsSync(`/proc/${pid}/cmdline`) && desktopProcesses(home.home).some((p) => p.pid === pid)).toBe(false);

  // Nothing to pause any more, said plainly.
  await say(telegram, "/pause");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t === "No desktop session is running."), 5000);
}, 60_000);

test("OpenAI's native computer tool: a batch of actions, and a safety check that waits for the owner's Approve", async () => {
  const { model, telegram, home, daemon, data } = await computerDaemon({ model: "gpt-5.4" });
  const file = join(data, "native.txt");
  const check = { id: "cu_sc_1", code: "malicious_instructions", message: "The screen may show instructions that are not the user's." };
  model.reply(
    reply.computerCall({ actions: [{ type: "screenshot" }] }),
    reply.computerCall({
      actions: [
        { type: "click", button: "left", ...IN_TERMINAL },
        { type: "type", text: `echo native > ${file}` },
        { type: "keypress", keys: ["ENTER"] },
      ],
      safetyChecks: [check],
    }),
    reply.text("Written."),
  );

  await say(telegram, "Use the terminal to write native.txt");
  const [opening, looked] = await model.waitForRequests(2, 20_000);
  // The computer-use model is offered OpenAI's own tool, not the function.
  expect(opening!.body.tools).toContainEqual({ type: "computer" });
  expect(opening!.body.tools?.some((t) => t.name === "computer")).toBe(false);
  const [firstShot] = screenshots(looked!, 640, 400);
  expect(toolImages(looked!)[0]!.native).toBe(true);

  // The check is shown to Alice with Approve and Deny; nothing goes on meanwhile.
  const prompt = await telegram.waitForCall("sendMessage", (call) => String(call.body.text ?? "").includes("Safety check"), 10_000);
  expect(String(prompt.body.text)).toContain(check.message);
  await Bun.sleep(WAITING_MS);
  expect(existsSync(file)).toBe(false);
  expect(model.requests).toHaveLength(2);

  const promptMessage = telegram.botMessages(ALICE.id).find((m) => (m.text ?? "").includes("Safety check"))!;
  const answer = await telegram.waitForCallbackAnswer(telegram.pressButton(ALICE.id, promptMessage.message_id));
  expect(answer.text).toContain("Approved");

  const [, , after] = await model.waitForRequests(3, 20_000);
  await until("the approved actions wrote their file", () => existsSync(file));
  const output = (after!.body.input ?? []).filter((i) => i.type === "computer_call_output").at(-1)!;
  expect(output.acknowledged_safety_checks).toEqual([check]);
  // The call is given back as the model sent it, its screenshot after the batch.
  expect((after!.body.input ?? []).filter((i) => i.type === "computer_call").at(-1)!.actions).toHaveLength(3);
  const shots = screenshots(after!, 640, 400);
  expect(same(shots.at(-1)!, firstShot!)).toBe(false);
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("Written."), 10_000);

  // The daemon's shutdown ends the session with it.
  expect(desktopProcesses(home.home).length).toBeGreaterThan(0);
  expect(await daemon.stop("SIGTERM")).toBe(0);
  expect(desktopProcesses(home.home)).toEqual([]);
}, 60_000);

test("a session nobody uses for idle_minutes is torn down", async () => {
  const { model, telegram, home } = await computerDaemon({ idleMinutes: 0.03 });
  model.reply(reply.toolCall("computer", { action: "screenshot" }), reply.text("I see a terminal."));
  await say(telegram, "What is on the screen?");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("I see a terminal."), 20_000);
  expect(userText(model.requests[0]!)).toContain("What is on the screen?");
  // 1.8 s of idleness ends it; the wait allows for a loaded machine.
  await until("the idle session is gone", () => desktopProcesses(home.home).length === 0, 15_000);
  await say(telegram, "/tasks");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("No background tasks")), 5000);
}, 40_000);

test("past max_actions the turn ends and says so; a display that dies is reported once and cleaned up, and the next action starts a new one", async () => {
  const { model, telegram, home, daemon } = await computerDaemon({ maxActions: 2 });
  model.reply(
    reply.toolCall("computer", { action: "screenshot" }),
    reply.toolCall("computer", { action: "wait", ms: 10 }),
    reply.toolCall("computer", { action: "screenshot" }),
    reply.text("That is all I may do for now."),
  );
  await say(telegram, "Look at the screen three times");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("That is all I may do for now.") && t.includes("max_actions")), 20_000);
  expect(lastOutput(model.requests[3]!)).toContain("refused: this turn has done 2 desktop actions");
  // Each action is counted by kind and outcome.
  const metrics = await (await fetch(new URL("/metrics", daemon.url))).text();
  expect(metrics).toContain('fermix_computer_actions_total{action="screenshot",outcome="ok"} 1');
  expect(metrics).toContain('fermix_computer_actions_total{action="wait",outcome="ok"} 1');
  expect(metrics).toContain('fermix_computer_actions_total{action="screenshot",outcome="refused"} 1');

  // The X server dies (killed from outside): the owner is told once, and nothing of the session is left.
  const server = desktopProcesses(home.home).find((p) => p.command.endsWith("Xvfb"))!;
  process.kill(server.pid, "SIGKILL");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("ended unexpectedly")), 10_000);
  await until("nothing of the dead session is left", () => desktopProcesses(home.home).length === 0, 10_000);
  expect(telegram.visibleTexts(ALICE.id).filter((t) => t.includes("ended unexpectedly"))).toHaveLength(1);

  model.reply(reply.toolCall("computer", { action: "screenshot" }), reply.text("A fresh desktop."));
  await say(telegram, "Look again");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("A fresh desktop."), 20_000);
  expect(desktopProcesses(home.home).filter((p) => p.command.endsWith("Xvfb"))).toHaveLength(1);
  expect(photos(telegram).filter((p) => p.caption.includes("Desktop session started"))).toHaveLength(2);

  // A daemon killed outright takes its desktop with it: the X server and the window manager end with their parent.
  await daemon.stop("SIGKILL");
  await until("nothing of the killed daemon's desktop is left", () => desktopProcesses(home.home).length === 0, 10_000);
}, 60_000);

test("display = host drives the display DISPLAY names, and /stop leaves it running: Fermix started nothing there", async () => {
  // The owner's "own" display: an Xvfb this test starts, with its cookie.
  const dir = start.dataFolder();
  const cookie = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  const authority = join(dir, "Xauthority");
  const display = `:${170 + Math.floor(Math.random() * 20)}`;
  expect(Bun.spawnSync(["xauth", "-q", "-f", authority, "add", display, ".", cookie]).exitCode).toBe(0);
  const x = Bun.spawn(["Xvfb", display, "-auth", authority, "-nolisten", "tcp", "-screen", "0", "800x600x24"], { stdout: "ignore", stderr: "ignore" });
  start.defer(() => {
    x.kill("SIGKILL");
    return x.exited;
  });
  const env = { DISPLAY: display, XAUTHORITY: authority };
  await until(
    "the test's own display answers",
    () => Bun.spawnSync(["xdotool", "getdisplaygeometry"], { env: { ...env, PATH: process.env.PATH ?? "" } }).exitCode === 0,
    10_000,
  );

  const { model, telegram } = await computerDaemon({ display: "host", env });
  model.reply(reply.toolCall("computer", { action: "screenshot" }), reply.text("Your screen is empty."));
  await say(telegram, "What is on my screen?");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("Your screen is empty."), 20_000);
  // The model saw the host display at its own size.
  expect(screenshots(model.requests[1]!, 800, 600)).toHaveLength(1);
  await say(telegram, "/stop");
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("Stopped") && t.includes("the desktop session")), 10_000);
  expect(x.exitCode).toBeNull();
  expect(
    Bun.spawnSync(["xdotool", "getdisplaygeometry"], { env: { ...env, PATH: process.env.PATH ?? "" } })
      .stdout.toString()
      .trim(),
  ).toBe("800 600");
}, 40_000);
