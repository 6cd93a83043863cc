/**
 * `fermix chat`: an interactive conversation. Line editing and history
 * (kept in `<home>/chat_history`), a trailing `\` continues the message on
 * the next line, Ctrl-C stops the running turn (or clears the line), Ctrl-D
 * exits. Replies are shown as rendered Markdown.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { resolveHome } from "../config/paths.ts";
import { type CliContext, UsageError } from "./context.ts";
import { renderEvent, spinner } from "./render.ts";
import { openSession } from "./session.ts";

const HISTORY_SIZE = 500;

export async function main(args: string[], ctx: CliContext): Promise<number> {
  if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`);
  const session = await openSession(ctx.env);
  const { input, output } = ctx.terminal();
  const historyFile = join(resolveHome(ctx.env), "chat_history");
  const history = existsSync(historyFile) ? readFileSync(historyFile, "utf8").split("\n").filter(Boolean).reverse() : [];
  const rl = createInterface({ input, output, terminal: ctx.isTTY, history, historySize: HISTORY_SIZE, prompt: "› " });
  // NO_COLOR turns off colour in the rendered replies, not the spinner (which has none): a user still sees progress.
  const colors = !ctx.env.NO_COLOR;

  ctx.stdout(`fermix chat (${session.mode === "daemon" ? "via the running daemon" : "in-process"}) — /help for commands, Ctrl-C stops a reply, Ctrl-D exits\n`);
  let pending: string[] = [];
  // Turns in flight. A line typed meanwhile is sent at once — a second message waits its turn in the
  // daemon's queue, and a /stop stops the running reply — so the keyboard never waits for an answer.
  let busy = 0;
  let stopSpinner: () => void = () => {};

  const runTurn = async (text: string) => {
    busy++;
    stopSpinner();
    stopSpinner = spinner(ctx.stderr, ctx.isTTY);
    await session.turn(text, (event) => {
      const shown = renderEvent(event, ctx.isTTY, colors);
      if (shown === null) return;
      stopSpinner();
      (event.type === "error" ? ctx.stderr : ctx.stdout)(shown);
      stopSpinner = busy > 0 ? spinner(ctx.stderr, ctx.isTTY) : () => {};
    });
    busy--;
    stopSpinner();
    stopSpinner = busy > 0 ? spinner(ctx.stderr, ctx.isTTY) : () => {};
    if (busy === 0) {
      rl.setPrompt("› ");
      rl.prompt();
    }
  };

  // Typing during a reply: the spinner gives way, so the keys show on a clean line (it comes back with the next line).
  input.on("keypress", (_text: string | undefined, key: { name?: string } | undefined) => {
    // Enter itself starts a turn (and its spinner): only the keys of a new line make room.
    if (key?.name === "return" || key?.name === "enter") return;
    if (busy > 0) {
      stopSpinner();
      stopSpinner = () => {};
    }
  });

  rl.on("line", (line) => {
    if (line.endsWith("\\")) {
      pending.push(line.slice(0, -1));
      rl.setPrompt("… ");
      rl.prompt();
      return;
    }
    const text = [...pending, line].join("\n").trim();
    pending = [];
    rl.setPrompt("› ");
    if (text === "") {
      if (busy === 0) rl.prompt();
      return;
    }
    void runTurn(text);
  });
  rl.on("SIGINT", () => {
    if (busy > 0) {
      ctx.stderr("\r\u001b[2K(stopping…)\n");
      session.stop();
      return;
    }
    pending = [];
    rl.write(null, { ctrl: true, name: "u" });
    ctx.stdout("\n(Ctrl-D to exit)\n");
    rl.setPrompt("› ");
    rl.prompt();
  });
  const onShutdown = () => rl.close();
  ctx.shutdown.addEventListener("abort", onShutdown, { once: true });

  rl.prompt();
  await new Promise<void>((resolve) => rl.once("close", resolve));
  ctx.shutdown.removeEventListener("abort", onShutdown);
  if (busy > 0) session.stop();
  saveHistory(historyFile, (rl as unknown as { history: string[] }).history ?? []);
  ctx.stdout("\n");
  await session.close();
  return 0;
}

function saveHistory(path: string, lines: string[]): void {
  try {
    writeFileSync(path, `${[...lines].reverse().slice(-HISTORY_SIZE).join("\n")}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
  } catch {
    // History is a convenience; failing to keep it must not fail the chat.
  }
}
