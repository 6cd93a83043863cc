/**
 * Setup's conversation with a running daemon over its control socket: ask
 * it to reload after a write (and show the health that results), and pair
 * a channel's owner through it when it is the one polling that channel.
 */
import { type ClientEvent, encodeEvent, LineDecoder, type ServerEvent } from "../channels/cli/protocol.ts";
import { describeError } from "../kernel/errors.ts";
import type { ReloadResult } from "../kernel/health.ts";
import { socketAnswers } from "../kernel/unix-socket.ts";
import type { DaemonPairing } from "../setup/pairing.ts";

/** Whether a daemon answers on this home's control socket. */
export function daemonRunning(controlSocket: string): Promise<boolean> {
  return socketAnswers(controlSocket);
}

/** Send one request and wait for its first answer (or the socket closing). */
async function ask(controlSocket: string, request: ClientEvent, signal?: AbortSignal): Promise<ServerEvent> {
  const decoder = new LineDecoder();
  let settle!: (event: ServerEvent) => void;
  const answered = new Promise<ServerEvent>((resolve) => (settle = resolve));
  const socket = await Bun.connect({
    unix: controlSocket,
    socket: {
      data(_socket, chunk) {
        for (const line of decoder.push(chunk)) {
          try {
            settle(JSON.parse(line) as ServerEvent);
          } catch {
            // A line that is not JSON is not an answer.
          }
        }
      },
      close() {
        settle({ type: "error", message: "the daemon closed the connection" });
      },
    },
  });
  const onAbort = () => settle({ type: "error", message: "cancelled" });
  signal?.addEventListener("abort", onAbort, { once: true });
  socket.write(encodeEvent(request));
  try {
    return await answered;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    socket.end();
  }
}

/** Tell the daemon to reload; its answer, or the reason it could not give one. */
export async function reloadDaemon(controlSocket: string): Promise<ReloadResult | { error: string }> {
  try {
    const answer = await ask(controlSocket, { type: "reload" });
    if (answer.type === "reloaded") return answer.result;
    return { error: answer.type === "error" ? answer.message : `unexpected answer ${answer.type}` };
  } catch (error) {
    return { error: describeError(error) };
  }
}

/** A one-time link to the daemon's setup page, or why there is none. */
export async function askSetupLink(controlSocket: string): Promise<{ url: string; expiresInSeconds: number } | { error: string }> {
  try {
    const answer = await ask(controlSocket, { type: "setup_link" });
    if (answer.type === "setup_link") return { url: answer.url, expiresInSeconds: answer.expires_in_seconds };
    return { error: answer.type === "error" ? answer.message : `unexpected answer ${answer.type}` };
  } catch (error) {
    return { error: describeError(error) };
  }
}

/** The next unknown sender on `channel`, as the daemon sees it. */
export async function pairThroughDaemon(controlSocket: string, channel: string, timeoutMs: number, signal?: AbortSignal): Promise<DaemonPairing> {
  let answer: ServerEvent;
  try {
    answer = await ask(controlSocket, { type: "await_sender", channel, timeout_ms: timeoutMs }, signal);
  } catch (error) {
    return { kind: "unavailable", why: describeError(error) };
  }
  if (answer.type === "sender") return { kind: "sender", id: answer.sender_id, ...(answer.sender_name ? { name: answer.sender_name } : {}) };
  if (answer.type === "timeout") return { kind: "timeout" };
  return { kind: "unavailable", why: answer.type === "error" ? answer.message : `unexpected answer ${answer.type}` };
}

/** Reload a running daemon and say what came of it; or say how to start one. */
export async function daemonReport(controlSocket: string): Promise<string> {
  if (!(await daemonRunning(controlSocket))) return "no daemon is running: start it with `fermix run`, or in the background with `fermix service install`\n";
  const result = await reloadDaemon(controlSocket);
  return describeReload(result);
}

export function describeReload(result: ReloadResult | { error: string }): string {
  if ("error" in result) return `the running daemon did not reload: ${result.error}\n`;
  if (!result.ok) return `the running daemon kept its previous config: ${result.error}\n`;
  const lines = [`the running daemon reloaded: health ${result.health.status}`];
  const { started, stopped, restarted } = result.channels;
  const moved = [...started.map((c) => `${c} started`), ...restarted.map((c) => `${c} restarted`), ...stopped.map((c) => `${c} stopped`)];
  if (moved.length > 0) lines.push(`  channels: ${moved.join(", ")}`);
  for (const failure of result.health.failures) lines.push(`  ${failure}`);
  if (result.restart_required.length > 0) {
    lines.push(`  restart required to apply: ${result.restart_required.join("; ")} (fermix service install restarts the service, or restart \`fermix run\`)`);
  }
  return `${lines.join("\n")}\n`;
}
