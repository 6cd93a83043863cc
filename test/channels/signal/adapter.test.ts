/**
 * The Signal adapter against the fake signal-cli executable (a real child
 * process speaking JSON-RPC over stdio): the adapter contract, then what is
 * Signal's own — receiving, replying to people and groups, reactions, files
 * both ways, the child dying and coming back, a missing executable.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignalAdapter } from "../../../src/channels/signal/index.ts";
import { SIGNAL_MEDIA_CAP } from "../../../src/channels/signal/outbound.ts";
import { SignalRpcError, SignalTimeout } from "../../../src/channels/signal/rpc.ts";
import { classifySendError } from "../../../src/gateway/send-failure.ts";
import { HandoffUnavailable, type OutboundText, SendFailed } from "../../../src/message/index.ts";
import { runAdapterContract } from "../../contract/adapter.contract.ts";
import { SIGNAL_ALICE, SIGNAL_BOB, SIGNAL_GROUP, startSignalFake } from "../../fakes/signal.ts";
import { configFor, eventually, FAST, makeContext, startAdapter, waitReady } from "./harness.ts";

runAdapterContract("signal", async () => {
  const { fake, adapter, close } = await startAdapter();
  const inbound = fake.envelope.text("hello there") as { envelope: { timestamp: number } };
  await fake.receive(inbound);
  return {
    adapter,
    target: { chatId: SIGNAL_ALICE.uuid },
    inboundMessageId: `${SIGNAL_ALICE.uuid}:${inbound.envelope.timestamp}`,
    // Plain text: nothing renders bold on Signal.
    boldHi: "hi",
    visible: async () => fake.visible(SIGNAL_ALICE.uuid).map((m) => ({ text: m.text, notified: m.notified })),
    sentMedia: async () => fake.calls("send").flatMap((c) => (c.files ?? []).map((f) => ({ filename: f.name, size: f.size }))),
    rejectFormattingNext: () => {
      throw new Error("Signal has no formatting to reject");
    },
    formattingRejection: false,
    // signal-cli's -3: it could not reach Signal's servers.
    serverErrorNext: () => fake.fail("send", { code: -3, message: "Failed to send message due to a network error" }),
    inboundMedia: async (bytes, mime) => {
      const a = fake.addAttachment(bytes, mime, "inbound.png");
      return { kind: "image", mime, declaredSize: a.size, filename: "inbound.png", ref: a.id };
    },
    reaction: "👀",
    hasReaction: async (id, emoji) => fake.reactions().some((r) => `${r.targetAuthor}:${r.targetTimestamp}` === id && r.emoji === emoji),
    documentCap: SIGNAL_MEDIA_CAP,
    stop: close,
  };
});

const text = (t: string, notify = true): OutboundText => ({ text: t, notify, linkPreview: false, plain: false });
/** After a second start that failed, long enough for the 200 and 400 ms backoff steps that follow, and for dozens of starts in a tight loop. */
const BACKOFF_WINDOW_MS = 600;
/** A missing signal-cli is looked for again every backoff maximum (200 ms with FAST): a message logged per look would show twice more in this window. */
const RETRY_WINDOW_MS = 500;

describe("signal adapter", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
  async function started(options: Parameters<typeof startAdapter>[0] = {}, fake = startSignalFake()) {
    const s = await startAdapter(options, fake);
    cleanups.push(s.close);
    return s;
  }

  test("runs one `signal-cli -a ACCOUNT jsonRpc` child, ready once it answers; the account stays out of the log", async () => {
    const { fake, adapter, ctx } = await started();
    const [start] = fake.starts();
    expect(start!.argv.slice(-3)).toEqual(["-a", fake.account, "jsonRpc"]);
    expect(fake.calls("version")).toHaveLength(1);
    expect(adapter.state()).toEqual({ status: "ready", process_alive: true });
    expect(ctx.redacted).toContain(fake.account);
    // signal-cli's stderr reaches the log (the daemon's logger then redacts the account in it).
    await eventually(() => ctx.lines.some((l) => l.includes("fake signal-cli started")), 5000, "stderr in the log");
  });

  test("a direct message is committed to the inbox and reaches the gateway; receipts, typing, sync and stories do not", async () => {
    const { fake, ctx } = await started();
    for (const noise of [fake.envelope.receipt(), fake.envelope.typing(), fake.envelope.sync(), fake.envelope.story()]) await fake.receive(noise);
    const params = fake.envelope.text("hi fermix") as { envelope: { timestamp: number } };
    await fake.receive(params);
    const [message] = await eventually(() => (ctx.ingested.length > 0 ? ctx.ingested : undefined), 5000, "the message");
    expect(message).toMatchObject({
      channel: "signal",
      chatId: SIGNAL_ALICE.uuid,
      senderId: SIGNAL_ALICE.uuid,
      senderAliases: [SIGNAL_ALICE.number],
      messageId: `${SIGNAL_ALICE.uuid}:${params.envelope.timestamp}`,
      text: "hi fermix",
    });
    expect(ctx.submitted.map((s) => s.key)).toEqual([`${SIGNAL_ALICE.uuid}:${params.envelope.timestamp}`]);
    // Delivered twice (a signal-cli restart can resend), handled once: a later message from
    // the same person comes in after the repeat, and the repeat is not in before it.
    await fake.receive(params);
    await fake.receive(fake.envelope.text("and then this"));
    await eventually(() => ctx.ingested.some((m) => m.text === "and then this"), 5000, "the later message");
    expect(ctx.ingested.map((m) => m.text)).toEqual(["hi fermix", "and then this"]);
  });

  test("a reply goes to the person's UUID; only parts marked notify are urgent", async () => {
    const { fake, adapter } = await started();
    const port = adapter.replyPort({ chatId: SIGNAL_ALICE.uuid });
    const first = await port.sendText(text("Hello Alice"));
    await port.sendText(text("and more", false));
    const [a, b] = fake.calls("send");
    expect(a!.request.params).toEqual({ recipient: [SIGNAL_ALICE.uuid], message: "Hello Alice" });
    expect(b!.request.params).toEqual({ recipient: [SIGNAL_ALICE.uuid], message: "and more", noUrgent: true });
    expect(first.id).toBe(String(a!.response!.result!.timestamp));
  });

  test("a group message is answered in the group, by groupId; reactions there name the author", async () => {
    const { fake, adapter, ctx } = await started();
    const params = fake.envelope.text("hi all", { groupId: SIGNAL_GROUP, from: SIGNAL_BOB }) as { envelope: { timestamp: number } };
    await fake.receive(params);
    const [message] = await eventually(() => (ctx.ingested.length > 0 ? ctx.ingested : undefined), 5000, "the group message");
    expect(message!.chatId).toBe(`group:${SIGNAL_GROUP}`);
    expect(message!.senderId).toBe(SIGNAL_BOB.uuid);
    const port = adapter.replyPort({ chatId: message!.chatId, replyTo: message!.messageId });
    await port.sendText(text("hello group"));
    await port.react(message!.messageId, "👍");
    expect(fake.calls("send")[0]!.request.params).toEqual({ groupId: SIGNAL_GROUP, message: "hello group" });
    expect(fake.calls("sendReaction")[0]!.request.params).toEqual({
      groupId: SIGNAL_GROUP,
      emoji: "👍",
      targetAuthor: SIGNAL_BOB.uuid,
      targetTimestamp: params.envelope.timestamp,
    });
    expect(fake.visible(`group:${SIGNAL_GROUP}`).map((m) => m.text)).toEqual(["hello group"]);
  });

  test("reactions take any single emoji (flags and ZWJ sequences too) and refuse anything else", async () => {
    const { fake, adapter } = await started();
    const port = adapter.replyPort({ chatId: SIGNAL_ALICE.uuid });
    const id = `${SIGNAL_ALICE.uuid}:1700000000123`;
    for (const emoji of ["🦜", "🇫🇷", "👩‍💻", "❤️"]) await port.react(id, emoji);
    expect(fake.reactions().map((r) => [r.emoji, r.targetAuthor, r.targetTimestamp, r.to])).toEqual(
      ["🦜", "🇫🇷", "👩‍💻", "❤️"].map((e) => [e, SIGNAL_ALICE.uuid, 1700000000123, SIGNAL_ALICE.uuid]),
    );
    await expect(port.react(id, "thumbsup")).rejects.toThrow("one emoji");
    await expect(port.react(id, "👍👍")).rejects.toThrow("one emoji");
    await expect(port.react("not-a-signal-id", "👍")).rejects.toThrow("not a Signal message id");
    expect(fake.calls("sendReaction")).toHaveLength(4);
  });

  test("typing and remote delete address the conversation; a deleted message is gone for the user", async () => {
    const { fake, adapter } = await started();
    const port = adapter.replyPort({ chatId: `group:${SIGNAL_GROUP}` });
    await port.typing();
    const sent = await port.sendText(text("💭 thinking"));
    await port.deleteMessage(sent);
    expect(fake.calls("sendTyping")[0]!.request.params).toEqual({ groupId: SIGNAL_GROUP });
    expect(fake.calls("remoteDelete")[0]!.request.params).toEqual({ groupId: SIGNAL_GROUP, targetTimestamp: Number(sent.id) });
    expect(fake.visible(`group:${SIGNAL_GROUP}`)).toEqual([]);
  });

  test("an image and a voice note in: media by kind, read from signal-cli's attachment store", async () => {
    const { fake, adapter, ctx } = await started();
    const png = fake.addAttachment(new TextEncoder().encode("png bytes"), "image/png", "photo.png");
    const voice = fake.addAttachment(new TextEncoder().encode("aac bytes"), "audio/aac", null);
    await fake.receive(fake.envelope.text("look and listen", { attachments: [png, voice] }));
    const [message] = await eventually(() => (ctx.ingested.length > 0 ? ctx.ingested : undefined), 5000, "the message");
    expect(message!.media.map((m) => [m.kind, m.mime, m.declaredSize])).toEqual([
      ["image", "image/png", 9],
      ["audio", "audio/aac", 9],
    ]);
    const fetched = await adapter.fetchMedia(message!.media[0]!);
    expect(new TextDecoder().decode(fetched.bytes)).toBe("png bytes");
    expect(fetched).toMatchObject({ mime: "image/png", filename: "photo.png" });
    expect(new TextDecoder().decode((await adapter.fetchMedia(message!.media[1]!)).bytes)).toBe("aac bytes");
    // A file signal-cli no longer has is a clear error naming the store.
    await expect(adapter.fetchMedia({ kind: "image", ref: "gone.png" })).rejects.toThrow(fake.attachmentsDir);
    await expect(adapter.fetchMedia({ kind: "image", ref: "../config.json" })).rejects.toThrow("not a signal-cli attachment id");
  });

  test("a file out is sent by path under its own name, with its caption, and the link is cleaned up", async () => {
    const { fake, adapter } = await started();
    const scratch = mkdtempSync(join(tmpdir(), "fermix-signal-out-"));
    cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
    const spooled = join(scratch, "0-report.pdf");
    writeFileSync(spooled, "%PDF-1.7 twelve");
    const port = adapter.replyPort({ chatId: SIGNAL_ALICE.uuid });
    const sent = await port.sendMedia({
      kind: "document",
      path: spooled,
      filename: "report.pdf",
      mime: "application/pdf",
      caption: "Your report",
      notify: true,
    });
    const [call] = fake.calls("send");
    expect(call!.request.params).toMatchObject({ recipient: [SIGNAL_ALICE.uuid], message: "Your report" });
    expect(call!.files).toEqual([{ path: expect.stringContaining("report.pdf"), name: "report.pdf", size: 15 }]);
    expect(sent.id).toBe(String(call!.response!.result!.timestamp));
    // The named link lived only for the request.
    expect(await Bun.file(call!.files![0]!.path).exists()).toBe(false);
    // A file whose name is already right goes as it is.
    const named = join(scratch, "photo.jpg");
    writeFileSync(named, "jpg");
    await port.sendMedia({ kind: "image", path: named, filename: "photo.jpg", mime: "image/jpeg", notify: false });
    expect(fake.calls("send")[1]!.request.params).toEqual({ recipient: [SIGNAL_ALICE.uuid], message: "", attachments: [named], noUrgent: true });
  });

  test("signal-cli's errors and silences are typed: a JSON-RPC error, a timeout", async () => {
    const { fake, adapter } = await started({ timeouts: { send: 300, sendMedia: 300, control: 300, typing: 300 } });
    const port = adapter.replyPort({ chatId: SIGNAL_ALICE.uuid });
    await fake.fail("send", { code: -1, message: "The user +15550002222 is not registered." });
    const refused = await port.sendText(text("x")).catch((e) => e);
    expect(refused).toBeInstanceOf(SignalRpcError);
    expect((refused as SignalRpcError).code).toBe(-1);
    expect((refused as Error).message).toContain("not registered");
    await fake.hold("send");
    await expect(port.sendText(text("y"))).rejects.toBeInstanceOf(SignalTimeout);
    // The session is still usable afterwards.
    expect((await port.sendText(text("z"))).id).toBeTruthy();
  });

  test("a failed send is a SendFailed, thrown as it is: delivery retries what heals (-3, -5, no child yet) and not what cannot (-1, a timeout after sending)", async () => {
    const { fake, adapter } = await started({ timeouts: { send: 300, sendMedia: 300, control: 300, typing: 300 }, backoff: { initialMs: 1500, maxMs: 1500 } });
    const port = adapter.replyPort({ chatId: SIGNAL_ALICE.uuid });
    const failure = async (send: Promise<unknown>) => {
      const error = await send.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SendFailed);
      // What the delivery engine reads off the error is what the port threw, not a wrapper's guess.
      expect(classifySendError(error).transient).toBe((error as SendFailed).transient);
      return error as SendFailed;
    };
    for (const [code, transient] of [
      [-3, true],
      [-5, true],
      [-1, false],
    ] as const) {
      await fake.fail("send", { code, message: `failure ${code}` });
      const error = await failure(port.sendText(text("x")));
      expect(error).toBeInstanceOf(SignalRpcError);
      expect([(error as SignalRpcError).code, error.transient]).toEqual([code, transient]);
    }
    await fake.hold("send");
    const late = await failure(port.sendText(text("y")));
    expect([late.name, late.transient]).toEqual(["SignalTimeout", false]);

    // The child gone and its restart further off than the send may wait: nothing reached signal-cli, so it is worth another try.
    await fake.exit(1, "ERROR gone");
    await eventually(() => !adapter.state().process_alive, 5000, "the exit to show");
    const notSent = await failure(port.sendText(text("z")));
    expect([notSent.name, notSent.transient]).toEqual(["SignalUnavailable", true]);
    expect(notSent.message).toContain("not sent");
    await adapter.stop();
    const stopped = await failure(port.sendText(text("after stop")));
    expect([stopped.name, stopped.transient]).toEqual(["SignalUnavailable", true]);
  });

  test("a stdout line that is not JSON-RPC is logged and skipped; messages after it still arrive", async () => {
    const { fake, ctx } = await started();
    await fake.raw("this is not json");
    await fake.raw("42");
    await fake.receive(fake.envelope.text("still here"));
    await eventually(() => ctx.ingested.some((m) => m.text === "still here"), 5000, "the message after the garbage");
    expect(ctx.lines.filter((l) => l.includes("not JSON-RPC"))).toHaveLength(2);
  });

  test("a daemon at capacity: the message is held and submitted again, in order, not dropped", async () => {
    const { fake, ctx } = await started();
    ctx.failSubmits(new HandoffUnavailable(), 3);
    await fake.receive(fake.envelope.text("first"));
    await fake.receive(fake.envelope.text("second"));
    await eventually(() => ctx.ingested.length === 2, 5000, "both messages");
    expect(ctx.ingested.map((m) => m.text)).toEqual(["first", "second"]);
    expect(ctx.lines.some((l) => l.includes("daemon at capacity"))).toBe(true);
  });

  test("the child dying: health shows it and why, it is restarted with backoff, and replies flow again", async () => {
    const { fake, adapter, ctx } = await started({ backoff: { initialMs: 400, maxMs: 400 } });
    const [first] = fake.starts();
    await fake.exit(3, "ERROR Connection closed unexpectedly");
    const down = await eventually(() => (adapter.state().process_alive ? undefined : adapter.state()), 5000, "the exit to show");
    expect(down.status).toBe("degraded");
    expect(down.detail).toContain("code 3");
    // signal-cli's own words go to the log, never to health.
    expect(down.detail).not.toContain("Connection closed unexpectedly");
    expect(ctx.lines.some((l) => l.includes("Connection closed unexpectedly"))).toBe(true);
    // A reply asked for while it is down waits for the new child instead of failing.
    const reply = adapter.replyPort({ chatId: SIGNAL_ALICE.uuid }).sendText(text("after the restart"));
    const starts = await fake.waitForStarts(2);
    expect(starts[1]!.pid).not.toBe(first!.pid);
    await waitReady(adapter);
    expect((await reply).id).toBeTruthy();
    expect(fake.visible(SIGNAL_ALICE.uuid).map((m) => m.text)).toEqual(["after the restart"]);
    // And receiving works on the new child.
    await fake.receive(fake.envelope.text("back again"));
    await eventually(() => ctx.ingested.some((m) => m.text === "back again"), 5000, "a message on the new child");
    expect(ctx.lines.some((l) => l.includes("signal-cli exited; restarting"))).toBe(true);
  });

  test("a child that cannot come up (unregistered account) is failed, signal-cli's reason in the log only, retried with growing waits", async () => {
    const fake = startSignalFake();
    fake.failStarts({ code: 1, stderr: "User +15550001111 is not registered." });
    const config = configFor(fake);
    const ctx = makeContext(config);
    const adapter = new SignalAdapter(config, { ...FAST, backoff: { initialMs: 100, maxMs: 10_000 } });
    cleanups.push(async () => {
      await adapter.stop();
      ctx.close();
      await fake.stop();
    });
    await adapter.start(ctx.context);
    const state = await eventually(() => (adapter.state().status === "failed" ? adapter.state() : undefined), 5000, "failed");
    // Its stderr names the account's number: health says it exited, the log says why.
    expect(state.detail).toContain("signal-cli exited");
    expect(state.detail).not.toContain("+15550001111");
    expect(ctx.lines.some((l) => l.includes("not registered"))).toBe(true);
    expect(state.process_alive).toBe(false);
    await eventually(() => fake.starts().length >= 2, 10_000, "a second attempt");
    // The next waits are 200 and 400 ms: a handful of attempts in this window, where a tight loop makes dozens.
    await Bun.sleep(BACKOFF_WINDOW_MS);
    expect(fake.starts().length).toBeLessThanOrEqual(5);
    // Registered now: the next attempt comes up.
    fake.failStarts(undefined);
    await waitReady(adapter, 15_000);
  });

  test("a missing or non-executable signal-cli is a health failure saying what to do, with no process started", async () => {
    const fake = startSignalFake();
    const scratch = mkdtempSync(join(tmpdir(), "fermix-signal-cli-"));
    const notExecutable = join(scratch, "signal-cli");
    writeFileSync(notExecutable, "#!/bin/sh\n");
    chmodSync(notExecutable, 0o644);
    cleanups.push(async () => {
      await fake.stop();
      rmSync(scratch, { recursive: true, force: true });
    });
    for (const [cliPath, expected] of [
      [join(scratch, "nope"), "does not exist"],
      [notExecutable, "not executable"],
      ["signal-cli-not-on-path", "not found"],
    ] as const) {
      const config = configFor(fake, { cliPath });
      const ctx = makeContext(config);
      const adapter = new SignalAdapter(config, { ...FAST, env: { PATH: scratch } });
      await adapter.start(ctx.context);
      const state = await eventually(() => (adapter.state().status === "failed" ? adapter.state() : undefined), 5000, "failed");
      expect(state.detail).toContain(expected);
      expect(state.detail).toContain("SIGNAL_CLI_PATH");
      expect(state.process_alive).toBe(false);
      // Logged once, not once per look.
      await Bun.sleep(RETRY_WINDOW_MS);
      expect(ctx.lines.filter((l) => l.includes("signal-cli cannot be started"))).toHaveLength(1);
      // Sends fail plainly rather than hang past their timeout.
      const port = adapter.replyPort({ chatId: SIGNAL_ALICE.uuid });
      await expect(port.sendText({ text: "x", notify: true, linkPreview: false, plain: true })).rejects.toBeDefined();
      await adapter.stop();
      ctx.close();
    }
    expect(fake.starts()).toEqual([]);
  });

  test("stop ends the child and fails later requests at once", async () => {
    const { fake, adapter } = await started();
    const pid = fake.starts()[0]!.pid;
    await adapter.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    expect(adapter.state()).toMatchObject({ status: "failed", process_alive: false, detail: "stopped" });
    await expect(adapter.replyPort({ chatId: SIGNAL_ALICE.uuid }).sendText(text("late"))).rejects.toThrow("not running");
  });

  test("a cli_path that is a symlink to the executable is followed", async () => {
    const fake = startSignalFake();
    const scratch = mkdtempSync(join(tmpdir(), "fermix-signal-link-"));
    symlinkSync(fake.cliPath, join(scratch, "signal-cli"));
    cleanups.push(async () => {
      await fake.stop();
      rmSync(scratch, { recursive: true, force: true });
    });
    const config = configFor(fake, { cliPath: "signal-cli" });
    const ctx = makeContext(config);
    const adapter = new SignalAdapter(config, { ...FAST, env: { ...process.env, PATH: scratch } });
    cleanups.push(async () => {
      await adapter.stop();
      ctx.close();
    });
    await adapter.start(ctx.context);
    await waitReady(adapter);
    expect(fake.starts()).toHaveLength(1);
  });
});
