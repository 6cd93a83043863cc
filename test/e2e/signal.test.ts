/**
 * Signal end to end with the compiled binary: the daemon runs the fake
 * signal-cli as its child, the fake model answers, and the reply is sent
 * back through signal-cli; a stranger gets nothing and costs no model call;
 * /stop ends a slow turn and nothing of it follows "Stopped"; a missing
 * signal-cli is a health failure and a doctor row, and the daemon runs on.
 */
import { expect, test } from "bun:test";
import { reply } from "../fakes/model-server.ts";
import { SIGNAL_ALICE, SIGNAL_BOB, SIGNAL_GROUP, type SignalFake } from "../fakes/signal.ts";
import { type RunningDaemon, runFermix } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, signalToml, TELEGRAM_OFF } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { until, within } from "../helpers/wait.ts";

const start = e2eResources();

interface Health {
  status: string;
  failures: string[];
  channels: Array<{ name: string; status: string; enabled: boolean; mode: string | null; process_alive: boolean | null }>;
}

async function health(d: RunningDaemon): Promise<Health> {
  return (await (await fetch(new URL("/health/ready", d.url))).json()) as Health;
}

/**
 * After /stop: the model sent a paragraph every 250 ms and block streaming
 * flushes a block as soon as one is complete, so a block, a retry or a
 * queued part that leaked would go within a second; 2.5 s holds that on a loaded machine.
 */
const STRAY_PART_MS = 2500;

/** The Signal channel's row of the health report once `holds` says so (or what it is after `timeoutMs`, for the assertion to show). */
async function signalHealth(d: RunningDaemon, holds: (c: Health["channels"][number]) => boolean, timeoutMs = 10_000) {
  const row = (r: Health) => r.channels.find((c) => c.name === "signal")!;
  let report = await health(d);
  // A timeout is not thrown: the row as it is goes back, and the test's assertion shows it.
  const settled = async () => {
    report = await health(d);
    return holds(row(report));
  };
  await until("the signal channel's health", settled, timeoutMs).catch(() => {});
  return { report, channel: row(report) };
}

/** The fake model, the fake signal-cli, and a home whose Signal channel runs it with Alice as owner (by phone number). */
async function setup(options: { cliPath?: (fake: SignalFake) => string; streaming?: "block" | "off" } = {}) {
  const model = await start.model();
  const signal = start.signal();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      signalToml({
        account: signal.account,
        cliPath: options.cliPath ? options.cliPath(signal) : signal.cliPath,
        attachmentsDir: signal.attachmentsDir,
        // The owner written as a phone number: the message arrives keyed by UUID and must still be let in.
        ownerUserId: SIGNAL_ALICE.number,
        streaming: options.streaming,
      }) +
      TELEGRAM_OFF +
      ACP_OFF,
  );
  return { model, signal, home };
}

const textsTo = (signal: SignalFake, chatId: string) => signal.visible(chatId).map((m) => m.text);

test("an owner's Signal message is answered through signal-cli; a stranger gets nothing and costs no model call", async () => {
  const { model, signal, home } = await setup();
  model.reply(reply.text("Hello ", "from the ", "fake model"));
  const d = await start.daemon(home);

  const { channel } = await signalHealth(d, (c) => c.status === "ready");
  expect(channel).toEqual({ name: "signal", status: "ready", enabled: true, mode: "subprocess", process_alive: true });
  expect(signal.starts()[0]!.argv.slice(-3)).toEqual(["-a", signal.account, "jsonRpc"]);

  await signal.receive(signal.envelope.text("hi fermix, say hello"));
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").includes("fake model"), 15_000);
  expect(textsTo(signal, SIGNAL_ALICE.uuid).join("\n")).toContain("Hello from the fake model");
  expect(model.requests).toHaveLength(1);
  // Typing was shown while the turn ran, to Alice.
  expect(signal.calls("sendTyping").some((c) => (c.request.params?.recipient as string[])?.[0] === SIGNAL_ALICE.uuid)).toBe(true);

  // Bob is on no list: received, dropped, no reply, no model call.
  await signal.receive(signal.envelope.text("hello? anyone?", { from: SIGNAL_BOB }));
  // Dropped is the end of it: no reply and no model call can follow the drop.
  await until("the drop", () => d.logs().includes("unauthorized sender dropped"), 5000);
  expect(textsTo(signal, SIGNAL_BOB.uuid)).toEqual([]);
  expect(textsTo(signal, SIGNAL_BOB.number)).toEqual([]);
  expect(model.requests).toHaveLength(1);

  // signal-cli's stderr reached the log, with the account number blanked.
  expect(d.logs()).toContain("fake signal-cli started for [redacted]");
  expect(d.logs()).not.toContain(signal.account);

  // The daemon's shutdown stops the child.
  const pid = signal.starts()[0]!.pid;
  expect(await d.stop()).toBe(0);
  expect(() => process.kill(pid, 0)).toThrow();
}, 40_000);

test("a photo in a group: read from signal-cli's store and shown to the model; the model's reaction lands on that message", async () => {
  const { model, signal, home } = await setup();
  model.reply(reply.toolCall("react", { emoji: "🦜" }), reply.text("A parrot, clearly."));
  const d = await start.daemon(home);
  await signalHealth(d, (c) => c.status === "ready");

  const bytes = new TextEncoder().encode("not really a png, but bytes all the same");
  const photo = signal.addAttachment(bytes, "image/png", "bird.png");
  const params = signal.envelope.text("what bird is this?", { groupId: SIGNAL_GROUP, attachments: [photo] }) as {
    envelope: { timestamp: number };
  };
  await signal.receive(params);
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").includes("A parrot"), 15_000);

  expect(JSON.stringify(model.requests[0]!.body)).toContain(Buffer.from(bytes).toString("base64"));
  expect(signal.reactions()).toEqual([
    { emoji: "🦜", targetAuthor: SIGNAL_ALICE.uuid, targetTimestamp: params.envelope.timestamp, to: `group:${SIGNAL_GROUP}` },
  ]);
  expect(textsTo(signal, `group:${SIGNAL_GROUP}`)).toEqual(["A parrot, clearly."]);
  expect(await d.stop()).toBe(0);
}, 40_000);

test('/stop during a slow turn aborts it, and nothing of the stopped reply is sent after "Stopped"', async () => {
  const { model, signal, home } = await setup();
  // A slow answer: a paragraph every 250 ms, far longer than the test lets it run.
  const chunks = Array.from(
    { length: 80 },
    (_, i) => `Paragraph ${i + 1} of a very long answer that keeps going and going, with enough words in it to fill a block message soon.\n\n`,
  );
  model.reply(reply.slow(250, ...chunks));
  const d = await start.daemon(home);
  await signalHealth(d, (c) => c.status === "ready");

  await signal.receive(signal.envelope.text("write me a very long essay"));
  const [request] = await model.waitForRequests(1);
  // Block streaming: the first blocks of the answer reach the user while it is still being written.
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").includes("Paragraph 1 "), 10_000);
  await signal.receive(signal.envelope.text("/stop"));
  const stopped = await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").includes("Stopped"), 10_000);
  await within(request!.untilAborted, "the model request to be aborted", 5000);

  // Long enough for a block flush, a retry or a queued part to show up if anything leaked.
  await Bun.sleep(STRAY_PART_MS);
  const after = signal.calls("send").filter((c) => c.at > stopped.at || (c.response?.result?.timestamp ?? 0) > stopped.response!.result!.timestamp!);
  expect(after.map((c) => c.request.params?.message)).toEqual([]);
  // The stopped turn had been speaking, and is not finished: its end never came.
  expect(textsTo(signal, SIGNAL_ALICE.uuid).some((t) => t.includes("Stopped"))).toBe(true);
  expect(textsTo(signal, SIGNAL_ALICE.uuid).join("\n")).not.toContain("Paragraph 80 ");
  expect(await d.stop()).toBe(0);
}, 40_000);

test("a missing signal-cli: a health failure naming the fix and a failing doctor row; the daemon runs on", async () => {
  const { home } = await setup({ cliPath: (fake) => `${fake.dir}/no-such-signal-cli` });
  const doctor = await runFermix(["doctor", "--json"], home.env);
  const rows = (JSON.parse(doctor.stdout) as { rows: Array<{ check: string; status: string; detail: string }> }).rows;
  const row = rows.find((r) => r.check === "channel signal signal-cli")!;
  expect(row.status).toBe("fail");
  expect(row.detail).toContain("no-such-signal-cli");
  expect(row.detail).toContain("SIGNAL_CLI_PATH");
  expect(doctor.exitCode).toBe(1);

  const d = await start.daemon(home);
  const { report, channel } = await signalHealth(d, (c) => c.status === "failed");
  expect(channel).toEqual({ name: "signal", status: "failed", enabled: true, mode: "subprocess", process_alive: false });
  expect(report.failures.join("\n")).toContain("signal-cli not found");
  // One error so far; that a later look does not log again is proven with short waits in
  // test/channels/signal/adapter.test.ts (here the next look is a minute away).
  expect(d.logs().split("signal-cli cannot be started").length - 1).toBe(1);
  expect((await fetch(new URL("/health/live", d.url))).status).toBe(200);
  expect(await d.stop()).toBe(0);
}, 30_000);

test("doctor finds the configured signal-cli", async () => {
  const { home, signal } = await setup();
  const doctor = await runFermix(["doctor", "--json"], { ...home.env, PORT: "0" });
  const rows = (JSON.parse(doctor.stdout) as { rows: Array<{ check: string; status: string; detail: string }> }).rows;
  expect(rows.find((r) => r.check === "channel signal signal-cli")).toEqual({ check: "channel signal signal-cli", status: "ok", detail: signal.cliPath });
  expect(rows.find((r) => r.check === "channel signal")!.status).toBe("ok");
});
