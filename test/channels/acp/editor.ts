/**
 * An editor as ACP tests need one: the SDK's client side, connected either
 * the way Zed does it (spawning `fermix acp` and talking over its stdio) or
 * straight to the daemon's socket. It records every `session/update` in
 * arrival order, and every permission request, answered as `permissionAnswer`
 * says ("cancelled" unless a test sets "allow" or "deny").
 */
import * as acp from "@agentclientprotocol/sdk";
import type { Socket, Subprocess } from "bun";
import { type SocketPipe, socketPipe } from "../../../src/channels/acp/pipe.ts";
import { ensureBinary } from "../../helpers/binary.ts";
import { until } from "../../helpers/wait.ts";

export interface Editor {
  /** Requests to the agent (initialize, session/new, session/prompt, …). */
  readonly agent: acp.ClientContext;
  readonly connection: acp.ClientConnection;
  /** Every update received, in order. */
  readonly updates: acp.SessionNotification[];
  /** Every session/request_permission received, in order. */
  readonly permissions: acp.RequestPermissionRequest[];
  /** How the next permission requests are answered: an option id, or "cancelled". */
  permissionAnswer: "allow" | "deny" | "cancelled";
  /** The `fermix acp` process, when spawned. */
  readonly proc?: Subprocess<"pipe", "pipe", "pipe">;
  initialize(): Promise<acp.InitializeResponse>;
  newSession(): Promise<string>;
  prompt(sessionId: string, text: string): Promise<acp.PromptResponse>;
  cancel(sessionId: string): Promise<void>;
  /** The agent_message_chunk texts of a session, in order. */
  chunks(sessionId: string): string[];
  /** Resolves once `check` holds for the updates received (polling; rejects after the timeout). */
  until(check: (updates: acp.SessionNotification[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Close the connection (and let the bridge exit). */
  close(): Promise<void>;
}

function editorOver(stream: acp.Stream, close: () => Promise<void>, proc?: Subprocess<"pipe", "pipe", "pipe">): Editor {
  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const answers = { permissionAnswer: "cancelled" as Editor["permissionAnswer"] };
  const connection = acp
    .client({ name: "test-editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      const answer = answers.permissionAnswer;
      return answer === "cancelled" ? { outcome: { outcome: "cancelled" as const } } : { outcome: { outcome: "selected" as const, optionId: answer } };
    })
    .connect(stream);
  const agent = connection.agent;
  return {
    agent,
    connection,
    updates,
    permissions,
    get permissionAnswer() {
      return answers.permissionAnswer;
    },
    set permissionAnswer(value) {
      answers.permissionAnswer = value;
    },
    ...(proc ? { proc } : {}),
    initialize: () =>
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      }),
    newSession: async () => (await agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] })).sessionId,
    prompt: (sessionId, text) => agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }),
    cancel: (sessionId) => agent.notify(acp.methods.agent.session.cancel, { sessionId }),
    chunks: (sessionId) =>
      updates.flatMap((n) =>
        n.sessionId === sessionId && n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" ? [n.update.content.text] : [],
      ),
    async until(check, what, timeoutMs = 5000) {
      await until(what, () => check(updates), timeoutMs).catch((error: Error) => {
        throw new Error(`${error.message}; updates: ${JSON.stringify(updates)}`);
      });
    },
    async close() {
      connection.close();
      await close();
    },
  };
}

/** Spawn the compiled `fermix acp` as an editor launches its agent, and speak ACP over its stdio. */
export function spawnEditor(env: Record<string, string | undefined>): Editor {
  const proc = Bun.spawn([ensureBinary(), "acp"], {
    env: env as Record<string, string>,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    void proc.stdin.end();
  };
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      proc.stdin.write(chunk);
      await proc.stdin.flush();
    },
    close: end,
    abort: end,
  });
  return editorOver(
    acp.ndJsonStream(output, proc.stdout),
    async () => {
      end();
      await proc.exited;
    },
    proc,
  );
}

/** Connect straight to an ACP socket (no bridge), for in-process tests. */
export async function connectEditor(path: string): Promise<Editor> {
  let pipe: SocketPipe | undefined;
  const socket: Socket<undefined> = await Bun.connect({
    unix: path,
    socket: {
      open(s) {
        pipe = socketPipe(s);
      },
      data: (_s, chunk) => pipe?.onData(chunk),
      drain: () => pipe?.onDrain(),
      close: () => pipe?.onClose(),
    },
  });
  if (!pipe) pipe = socketPipe(socket);
  return editorOver(acp.ndJsonStream(pipe.output, pipe.input), async () => {
    socket.end();
  });
}
