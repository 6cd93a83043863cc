/** The ACP adapter in process, with the real gateway and the fake model: what the editor sees, and what is left behind. */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { AcpAdapter } from "../../../src/channels/acp/index.ts";
import { type SocketPipe, socketPipe } from "../../../src/channels/acp/pipe.ts";
import { TURN_FAILED } from "../../../src/channels/acp/server.ts";
import { reply, userText } from "../../fakes/model-server.ts";
import { until } from "../../helpers/wait.ts";
import { connectEditor, type Editor } from "./editor.ts";
import { type AcpHarness, startAcp } from "./harness.ts";

// The SDK rejects what it still waits for with "ACP connection closed" when a client leaves. None of it may
// go unhandled: `bun test` fails the running test on any unhandled rejection, so every test here checks that.

let h: AcpHarness;
const editors: Editor[] = [];
async function editor(): Promise<Editor> {
  const e = await connectEditor(h.socket);
  editors.push(e);
  await e.initialize();
  return e;
}

async function idle(what: string): Promise<void> {
  const quiet = () => {
    const stats = h.adapter.stats();
    return stats.connections === 0 && stats.sessions === 0 && stats.prompts === 0 && stats.media === 0 && h.core.queue.activeKeys().length === 0;
  };
  await until(what, quiet, 5000).catch(() => {
    throw new Error(`${what}: still ${JSON.stringify(h.adapter.stats())}, queues ${h.core.queue.activeKeys()}`);
  });
}

beforeAll(async () => {
  h = await startAcp();
});
afterEach(async () => {
  for (const e of editors.splice(0)) await e.close();
  await idle("after the test");
  h.fake.reset();
});
afterAll(async () => {
  await h.close();
});

describe("ACP adapter", () => {
  test("reports a live socket to health", () => {
    expect(h.adapter.state()).toEqual({ status: "ready", process_alive: true });
  });

  test("reasoning arrives as agent_thought_chunk before the answer", async () => {
    h.fake.reply(reply.reasoning(["weighing ", "options"], "the ", "answer"));
    const e = await editor();
    const s = await e.newSession();
    expect((await e.prompt(s, "think")).stopReason).toBe("end_turn");
    const kinds = e.updates.map((n) => n.update.sessionUpdate);
    expect(kinds).toEqual(["agent_thought_chunk", "agent_thought_chunk", "agent_message_chunk", "agent_message_chunk"]);
    const thought = e.updates.flatMap((n) =>
      n.update.sessionUpdate === "agent_thought_chunk" && n.update.content.type === "text" ? [n.update.content.text] : [],
    );
    expect(thought.join("")).toBe("weighing options");
    expect(e.chunks(s).join("")).toBe("the answer");
  });

  test("a file the model sends becomes tool_call updates and one line naming it", async () => {
    const workspace = join(h.home, "workspace");
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, "report.txt"), "numbers\n");
    h.fake.reply(reply.toolCall("send_attachment", { path: "report.txt", caption: "the report" }), reply.text("Sent it."));
    const e = await editor();
    const s = await e.newSession();
    expect((await e.prompt(s, "send me the report")).stopReason).toBe("end_turn");
    const updates = e.updates.map((n) => n.update);
    const call = updates.find((u) => u.sessionUpdate === "tool_call");
    expect(call).toMatchObject({ sessionUpdate: "tool_call", title: "send attachment: report.txt", status: "pending", rawInput: { path: "report.txt" } });
    const statuses = updates.flatMap((u) => (u.sessionUpdate === "tool_call_update" ? [u.status] : []));
    expect(statuses).toEqual(["in_progress", "completed"]);
    const text = e.chunks(s).join("");
    expect(text.match(/📎 report\.txt — the report \(.*report\.txt\)/g)).toHaveLength(1);
    expect(text.endsWith("Sent it.")).toBe(true);
  });

  test("a model failure is a JSON-RPC error on session/prompt, with a code and the class message; the session goes on", async () => {
    h.fake.reply(reply.serverError(500), reply.text("fine now"));
    const e = await editor();
    const s = await e.newSession();
    const error = await e.prompt(s, "hello").then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(acp.RequestError);
    expect((error as acp.RequestError).code).toBe(TURN_FAILED);
    expect((error as acp.RequestError).message).toContain("model provider had an error");
    expect((error as acp.RequestError).message).not.toMatch(/https?:|127\.0\.0\.1/);
    expect(((error as acp.RequestError).data as { class: string }).class).toBe("server");
    expect((await e.prompt(s, "again")).stopReason).toBe("end_turn");
    expect(e.chunks(s).join("")).toContain("fine now");
  });

  test("session/new with a relative cwd is invalid params (ACP requires an absolute path)", async () => {
    const e = await editor();
    const error = await e.agent.request(acp.methods.agent.session.new, { cwd: "projects/here", mcpServers: [] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(acp.RequestError);
    expect((error as acp.RequestError).code).toBe(-32602);
    expect((error as acp.RequestError).message).toContain("Invalid params");
  });

  test("an image block reaches the model as image content, served from memory only while the prompt runs", async () => {
    h.fake.reply(reply.text("a red pixel"));
    const e = await editor();
    const s = await e.newSession();
    const png = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");
    const response = await e.agent.request(acp.methods.agent.session.prompt, {
      sessionId: s,
      prompt: [
        { type: "text", text: "what is this?" },
        { type: "image", mimeType: "image/png", data: png },
      ],
    });
    expect(response.stopReason).toBe("end_turn");
    const [request] = await h.fake.waitForRequests(1);
    expect(JSON.stringify(request!.body.input)).toContain(`data:image/png;base64,${png}`);
    expect(h.adapter.stats().media).toBe(0);
    await expect(h.adapter.fetchMedia({ kind: "image", ref: `${s}/gone/0` })).rejects.toThrow("only while their prompt runs");
  });

  test("a client that disconnects mid-turn cancels it and leaves no session, prompt or queue behind", async () => {
    h.fake.reply(reply.hang("partial"));
    const e = await connectEditor(h.socket);
    await e.initialize();
    const s = await e.newSession();
    const pending = e.prompt(s, "long").catch((error: unknown) => error);
    await e.until((u) => u.length > 0, "the first chunk");
    expect(h.adapter.stats()).toMatchObject({ connections: 1, sessions: 1, prompts: 1 });
    await e.close();
    const [request] = await h.fake.waitForRequests(1);
    await request!.untilAborted;
    await idle("after the disconnect");
    expect(await pending).toBeInstanceOf(Error);
  });

  test("a cancel ends the running prompt and the one queued behind it", async () => {
    h.fake.reply(reply.hang("first"), reply.text("never asked"));
    const e = await editor();
    const s = await e.newSession();
    const first = e.prompt(s, "one");
    await e.until((u) => u.length > 0, "the first chunk");
    const second = e.prompt(s, "two");
    await e.cancel(s);
    expect((await first).stopReason).toBe("cancelled");
    expect((await second).stopReason).toBe("cancelled");
    expect(h.fake.requests).toHaveLength(1);
  });

  test("sessions are private to their connection, and unknown ones are refused", async () => {
    const [a, b] = [await editor(), await editor()];
    const s = await a.newSession();
    await expect(b.prompt(s, "hi")).rejects.toThrow();
    await expect(a.prompt("no-such-session", "hi")).rejects.toThrow();
    expect(h.fake.requests).toHaveLength(0);
  });

  test("requests before initialize are refused", async () => {
    const e = await connectEditor(h.socket);
    editors.push(e);
    await expect(e.newSession()).rejects.toThrow(/initialized/);
  });

  test("a client using connectWith gets its answer and leaves cleanly", async () => {
    h.fake.reply(reply.text("pong"));
    let pipe: SocketPipe | undefined;
    const socket = await Bun.connect({
      unix: h.socket,
      socket: {
        open: (sock) => {
          pipe = socketPipe(sock);
        },
        data: (_s, chunk) => pipe?.onData(chunk),
        drain: () => pipe?.onDrain(),
        close: () => pipe?.onClose(),
      },
    });
    const result = await acp
      .client({ name: "once" })
      .onNotification(acp.methods.client.session.update, () => {})
      .connectWith(acp.ndJsonStream(pipe!.output, pipe!.input), async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
        return ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "ping" }] });
      });
    expect(result.stopReason).toBe("end_turn");
    socket.end();
    await idle("after connectWith");
    expect(userText(h.fake.requests[0]!)).toBe("ping");
  });
});

describe("ACP adapter stopping", () => {
  test("a running prompt is answered cancelled, and the socket is removed", async () => {
    const own = await startAcp({ provider: "vision = false" });
    try {
      const e = await connectEditor(own.socket);
      const init = await e.initialize();
      expect(init.agentCapabilities?.promptCapabilities?.image).toBe(false);
      own.fake.reply(reply.hang("working"));
      const s = await e.newSession();
      const pending = e.prompt(s, "long");
      await e.until((u) => u.length > 0, "the first chunk");
      await own.adapter.stop();
      expect((await pending).stopReason).toBe("cancelled");
      expect(existsSync(own.socket)).toBe(false);
      expect(own.adapter.state().process_alive).toBe(false);
      await e.close();
    } finally {
      await own.close();
    }
  });
});

describe("ACP adapter start", () => {
  test("refuses a socket a live listener owns, leaves it alone, and starts once it is free", async () => {
    const own = await startAcp();
    try {
      const second = new AcpAdapter(own.core.loaded.config);
      const context = {
        config: own.core.loaded.config,
        paths: own.core.loaded.paths,
        db: own.core.db,
        log: own.core.log,
        telemetry: own.core.telemetry,
        submit: async () => ({ fresh: 0, duplicates: 0 }),
        ingest: async () => "dropped" as const,
        stopConversation: () => {},
      };
      await expect(second.start(context)).rejects.toThrow(/in use/);
      await second.stop();
      expect(existsSync(own.socket)).toBe(true);
      const e = await connectEditor(own.socket);
      expect((await e.initialize()).protocolVersion).toBe(1);
      await e.close();

      await own.adapter.stop();
      await second.start(context);
      expect(second.state().status).toBe("ready");
      await second.stop();
      expect(second.state().process_alive).toBe(false);
      expect(existsSync(own.socket)).toBe(false);
    } finally {
      await own.close();
    }
  });
});
