/**
 * The conformance suite every channel adapter passes (one suite for every
 * implementation of ChannelAdapter, as every router of Hono passes one), run
 * against a loopback fake of that channel's platform. A channel's test file
 * builds a harness and calls `runAdapterContract`.
 *
 *   runAdapterContract("telegram", async () => {
 *     const fake = startTelegramFake();
 *     const adapter = telegramAdapter(configFor(fake));
 *     return { adapter, target: { chatId: "42" }, … , stop: async () => { await adapter.stop(); fake.stop(); } };
 *   });
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHANNELS } from "../../src/channels/registry.ts";
import type { ChannelAdapter } from "../../src/channels/types.ts";
import { FormattingRejected, type InboundMedia, MediaTooLarge, type OutboundText, type ReplyTarget, SendFailed } from "../../src/message/index.ts";

export interface VisibleMessage {
  text: string;
  /** Whether the platform was asked to notify for it. */
  notified: boolean;
}

export interface ContractHarness {
  adapter: ChannelAdapter;
  /** A conversation to send to. */
  target: ReplyTarget;
  /** A user's message in that conversation, to react to. */
  inboundMessageId: string;
  /** Text in the channel's dialect that renders as bold "hi" (e.g. "<b>hi</b>", "*hi*"). */
  boldHi: string;
  /** What the user sees in the conversation from the bot: current texts after edits, deleted ones gone. */
  visible(): Promise<VisibleMessage[]>;
  /** Media the bot sent, as the platform recorded them. */
  sentMedia(): Promise<Array<{ filename?: string; size: number }>>;
  /** Make the platform reject the next message for its formatting. */
  rejectFormattingNext(): void;
  /** Make the platform fail the next text send as a server in trouble does (an HTTP 5xx; signal-cli's own failure). */
  serverErrorNext(): void | Promise<void>;
  /** Register bytes on the fake and return how an inbound message would reference them. */
  inboundMedia(bytes: Uint8Array, mime: string): Promise<InboundMedia>;
  /** An emoji the channel accepts for reactions (a shortcode name on Slack). */
  reaction: string;
  /** Whether the platform shows a reaction on the message now. */
  hasReaction(messageId: string, emoji: string): Promise<boolean>;
  /** The outbound media cap for documents, bytes. */
  documentCap: number;
  /**
   * False when the platform has no per-message notification switch (Slack and
   * WhatsApp do not): the notify test then checks delivery only, instead of a
   * ringing the platform cannot be asked for. Default true.
   */
  notifyControl?: boolean;
  /**
   * False when the channel sends plain text only (Signal): nothing it sends
   * has formatting to reject, so `rejectFormattingNext` is never called and
   * the formatting test checks instead that rendered and plain text go out
   * alike. Default true.
   */
  formattingRejection?: boolean;
  stop(): Promise<void>;
}

const text = (t: string, notify = true): OutboundText => ({ text: t, notify, linkPreview: false, plain: false });

export function runAdapterContract(name: string, makeHarness: () => Promise<ContractHarness>): void {
  describe(`${name} adapter contract`, () => {
    let h: ContractHarness;
    let scratch: string;
    beforeEach(async () => {
      h = await makeHarness();
      scratch = mkdtempSync(join(tmpdir(), `fermix-contract-${name}-`));
    });
    afterEach(async () => {
      await h.stop();
      rmSync(scratch, { recursive: true, force: true });
    });

    test("the adapter and its ports are what the channel's profile says: capabilities, name and media cap", () => {
      const profile = CHANNELS[h.adapter.name].profile;
      expect(profile.name).toBe(h.adapter.name);
      expect(h.adapter.capabilities).toEqual(profile.capabilities);
      expect(h.adapter.replyPort(h.target).capabilities).toEqual(profile.capabilities);
      // What the rest of Fermix decides from the profile alone: edit, delete, buttons, the reaction set.
      const port = h.adapter.replyPort(h.target).capabilities;
      expect({ edit: port.edit, delete: port.delete, buttons: port.buttons ?? false, react: port.react }).toEqual({
        edit: profile.capabilities.edit,
        delete: profile.capabilities.delete,
        buttons: profile.capabilities.buttons ?? false,
        react: profile.capabilities.react,
      });
      expect(h.adapter.inboundMediaCap).toBe(profile.inboundMediaCap);
      expect(profile.streaming).toBe(port.edit ? "draft" : "block");
    });

    test("sendText delivers the rendered text and returns the platform's message id", async () => {
      const port = h.adapter.replyPort(h.target);
      const sent = await port.sendText(text(h.boldHi));
      expect(sent.id).toBeTruthy();
      const seen = await h.visible();
      expect(seen.at(-1)?.text).toContain("hi");
    });

    test("a platform failing a send is a SendFailed marked transient, so delivery retries it; the next send goes through", async () => {
      const port = h.adapter.replyPort(h.target);
      await h.serverErrorNext();
      const failed = await port.sendText(text("during the outage")).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(SendFailed);
      expect((failed as SendFailed).transient).toBe(true);
      await port.sendText(text("after the outage"));
      const seen = (await h.visible()).map((m) => m.text);
      expect(seen.some((t) => t.includes("after the outage"))).toBe(true);
      expect(seen.some((t) => t.includes("during the outage"))).toBe(false);
    });

    test("only messages marked notify ring", async () => {
      const port = h.adapter.replyPort(h.target);
      await port.sendText(text("first", true));
      await port.sendText(text("second", false));
      const seen = await h.visible();
      if (h.notifyControl === false) {
        expect(seen.slice(-2).map((m) => m.text)).toEqual([expect.stringContaining("first"), expect.stringContaining("second")]);
        return;
      }
      expect(seen.slice(-2).map((m) => m.notified)).toEqual([true, false]);
    });

    test("a formatting rejection surfaces as FormattingRejected, so the sender can resend as plain text", async () => {
      const port = h.adapter.replyPort(h.target);
      if (h.formattingRejection === false) {
        await port.sendText(text(h.boldHi));
        await port.sendText({ ...text(h.boldHi), plain: true });
        const [rendered, plain] = (await h.visible()).slice(-2).map((m) => m.text);
        expect(plain).toBe(rendered!);
        return;
      }
      h.rejectFormattingNext();
      await expect(port.sendText(text(h.boldHi))).rejects.toBeInstanceOf(FormattingRejected);
      const plain = await port.sendText({ ...text("hi"), plain: true });
      expect(plain.id).toBeTruthy();
    });

    test("edit and delete work when the channel says it can, and are not claimed otherwise", async () => {
      const port = h.adapter.replyPort(h.target);
      const sent = await port.sendText(text("draft"));
      if (port.capabilities.edit) {
        await port.editText(sent, text("final"));
        expect((await h.visible()).at(-1)?.text).toContain("final");
      }
      if (port.capabilities.delete) {
        const before = (await h.visible()).length;
        await port.deleteMessage(sent);
        expect((await h.visible()).length).toBe(before - 1);
      }
    });

    test("a reaction lands on the user's message when the channel has reactions", async () => {
      const port = h.adapter.replyPort(h.target);
      if (port.capabilities.react === false) return;
      await port.react(h.inboundMessageId, h.reaction);
      expect(await h.hasReaction(h.inboundMessageId, h.reaction)).toBe(true);
    });

    test("a document within the cap is uploaded; one over the cap becomes a text reply naming the cap", async () => {
      const port = h.adapter.replyPort(h.target);
      if (!port.capabilities.media) return;
      const small = join(scratch, "notes.txt");
      writeFileSync(small, "hello world");
      await port.sendMedia({ kind: "document", path: small, filename: "notes.txt", mime: "text/plain", notify: false });
      expect((await h.sentMedia()).some((m) => m.filename === "notes.txt" && m.size === 11)).toBe(true);

      const big = join(scratch, "big.bin");
      writeFileSync(big, new Uint8Array(h.documentCap + 1));
      const before = (await h.sentMedia()).length;
      await port.sendMedia({ kind: "document", path: big, filename: "big.bin", mime: "application/octet-stream", notify: false });
      expect((await h.sentMedia()).length).toBe(before);
      const last = (await h.visible()).at(-1)?.text ?? "";
      expect(last).toContain("big.bin");
      expect(last).toMatch(/\d+ MB/);
    });

    test("fetchMedia downloads the bytes of an inbound attachment", async () => {
      const bytes = new TextEncoder().encode("inbound bytes");
      const media = await h.inboundMedia(bytes, "image/png");
      const fetched = await h.adapter.fetchMedia(media);
      expect(new TextDecoder().decode(fetched.bytes)).toBe("inbound bytes");
    });

    test("fetchMedia holds a download to maxBytes: MediaTooLarge over it, by the declared size or by the bytes", async () => {
      const bytes = new TextEncoder().encode("twenty-six bytes of audio.");
      const media = await h.inboundMedia(bytes, "audio/ogg");
      for (const item of [media, { ...media, declaredSize: undefined }]) {
        const refused = await h.adapter.fetchMedia(item, undefined, 10).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(MediaTooLarge);
        expect((refused as MediaTooLarge).cap).toBe(10);
      }
      const fetched = await h.adapter.fetchMedia(media, undefined, bytes.byteLength);
      expect(fetched.bytes.byteLength).toBe(bytes.byteLength);
    });
  });
}
