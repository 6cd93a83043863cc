/**
 * The gateway side of `/ultra`: the ultra turn runs as a turn of kind
 * `ultra` in the one engine (its delivery, streaming, history and fault
 * messages, with `UltraMode` in the MainAgent's stead), under the queue's
 * signal so `/stop` ends it; while it works, one status message tells the
 * reader the phase ("planning", "3 of 4 parts done", "merging"), edited in
 * place where the channel can edit, and deleted when the turn is over where
 * it can delete. The status goes straight through the channel, not the
 * outbox, like the waiting notice: it is not part of the answer.
 */
import type { UltraMode, UltraProgress } from "../agent/ultra/engine.ts";
import { describeError } from "../kernel/errors.ts";
import type { Logger } from "../kernel/log.ts";
import type { GatewayChannel, ReplyPort, SentMessage } from "../message/index.ts";
import type { TurnEngine, TurnOutcome, TurnSpec } from "./turn/engine.ts";

/** The status line for a phase. */
export function progressText(progress: UltraProgress): string {
  switch (progress.phase) {
    case "planning":
      return "🧠 Ultra mode: planning the parts…";
    case "working":
      return `🧠 Ultra mode: ${progress.done} of ${progress.total} part${progress.total === 1 ? "" : "s"} done…`;
    case "merging":
      return "🧠 Ultra mode: merging the parts into one answer…";
  }
}

/** One status message for a turn: shown, updated, removed; nothing is sent or edited once the turn is stopped. */
export class UltraStatus {
  private sent: Promise<SentMessage | undefined> | undefined;
  private chain: Promise<void> = Promise.resolve();
  private shown = "";
  private closed = false;

  constructor(
    private readonly port: ReplyPort,
    private readonly channel: GatewayChannel,
    private readonly signal: AbortSignal,
    private readonly log: Logger,
    /** False where the client shows the turn itself or prints every message for good (the channel's profile streams null). */
    private readonly statusShown = true,
  ) {}

  /** Show the phase: the first call sends the message, later ones edit it (where the channel can edit). */
  show(progress: UltraProgress): void {
    if (this.closed || this.signal.aborted || !this.statusShown) return;
    const text = progressText(progress);
    if (text === this.shown) return;
    if (this.sent && !this.port.capabilities.edit) return;
    this.shown = text;
    const message = { text, notify: false, linkPreview: false as const, plain: true };
    if (!this.sent) {
      this.sent = this.port.sendText(message).catch((error: unknown) => {
        this.log.warn("could not show the ultra status", { channel: this.channel, error: describeError(error) });
        return undefined;
      });
      return;
    }
    this.chain = this.chain.then(async () => {
      const sent = await this.sent;
      if (!sent || this.closed || this.signal.aborted) return;
      await this.port.editText(sent, message).catch(() => {});
    });
  }

  /** The turn is over (answered, failed or stopped): the status goes, where the channel can delete it. */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
    const sent = await this.sent;
    if (sent && this.port.capabilities.delete) await this.port.deleteMessage(sent).catch(() => {});
  }
}

/** Run `input` (the owner's request, the queue's signal) as an ultra turn; resolves when it is delivered, or stopped. */
export async function runUltraTurn(
  engine: TurnEngine,
  ultra: UltraMode,
  input: Omit<TurnSpec, "runner" | "kind">,
  log: Logger,
  statusShown = true,
): Promise<TurnOutcome> {
  const status = new UltraStatus(input.rawPort, input.asker.channel, input.signal, log, statusShown);
  try {
    return await engine.run({ ...input, kind: "ultra", runner: (request) => ultra.runTurn(request, (progress) => status.show(progress)) });
  } finally {
    await status.close();
  }
}
