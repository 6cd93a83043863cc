/**
 * Squaring a replayed answer with what a crashed attempt delivered on a
 * channel that cannot take messages back (WhatsApp, Signal): pure cases of
 * `remainderAfter` (does the new answer begin with what was delivered?) and
 * `squared` (what the user is sent now: the rest, or the one "complete
 * answer after a restart" line and the whole new answer).
 */
import { describe, expect, test } from "bun:test";
import { remainderAfter } from "../../src/gateway/reconcile.ts";
import { RESTART_INTRO, squared } from "../../src/gateway/turn/replay.ts";
import type { OutboxPart, OutboxPayload } from "../../src/store/outbox.ts";

/** Delivered live parts of an interrupted reply, one per block source (a media part where `source` is null). */
function delivered(...sources: Array<string | null>): OutboxPart[] {
  return sources.map((source, part) => {
    const payload: OutboxPayload =
      source === null
        ? { kind: "media", media: { kind: "document", path: "/nonexistent/a.png", filename: "a.png", mime: "image/png", notify: false } }
        : { kind: "text", message: { text: `*${source}*`, source, notify: part === 0, linkPreview: false, plain: false } };
    return {
      id: part + 1,
      replyKey: "whatsapp:15550001:wamid.1",
      part,
      channel: "whatsapp",
      target: { chatId: "15550001" },
      payload,
      state: "sent",
      platformId: `wamid.out${part}`,
      attempts: 0,
      notBefore: null,
      live: true,
      purpose: "reply",
      firstFailedAt: null,
      createdAt: 0,
    };
  });
}

const BLOCK_1 = "The garden has three beds.\n\n";
const BLOCK_2 = "The first grows beans; the second, leeks.\n\n";
const BLOCK_3 = "The third is left fallow this year.";

describe("remainderAfter", () => {
  test("identical text: nothing remains", () => {
    expect(remainderAfter("One. Two.", "One. Two.")).toBe("");
  });

  test("a delivered prefix: the rest, without the whitespace that separated them", () => {
    expect(remainderAfter(BLOCK_1 + BLOCK_2 + BLOCK_3, BLOCK_1)).toBe(BLOCK_2 + BLOCK_3);
  });

  test("whitespace moved by a block cut or rendering does not make a difference", () => {
    expect(remainderAfter("First line.\nSecond line.\n\nThird.", "First line.  \n\n Second line.\n")).toBe("Third.");
  });

  test("a diverging answer: undefined", () => {
    expect(remainderAfter("The garden has four beds. More.", BLOCK_1)).toBeUndefined();
  });

  test("an answer shorter than what was delivered, though it starts the same: undefined", () => {
    expect(remainderAfter("The garden", BLOCK_1)).toBeUndefined();
  });

  test("a change in case or punctuation is a different text", () => {
    expect(remainderAfter("the garden has three beds. Then more.", BLOCK_1)).toBeUndefined();
    expect(remainderAfter("The garden has three beds! Then more.", BLOCK_1)).toBeUndefined();
  });

  test("nothing delivered (or only whitespace): the whole answer remains", () => {
    expect(remainderAfter(BLOCK_1 + BLOCK_2, "")).toBe(BLOCK_1 + BLOCK_2);
    expect(remainderAfter(BLOCK_1, " \n\n")).toBe(BLOCK_1);
  });

  test("an empty answer after something was delivered: undefined", () => {
    expect(remainderAfter("", BLOCK_1)).toBeUndefined();
  });
});

describe("squared", () => {
  const answer = BLOCK_1 + BLOCK_2 + BLOCK_3;

  test("the same answer in full was delivered: nothing is sent again", () => {
    expect(squared(answer, delivered(BLOCK_1, BLOCK_2, BLOCK_3))).toBe("");
  });

  test("the first blocks were delivered: only the rest follows, without the restart line", () => {
    const sent = squared(answer, delivered(BLOCK_1, BLOCK_2));
    expect(sent).toBe(BLOCK_3);
    expect(sent).not.toContain(RESTART_INTRO);
  });

  test("the replayed answer differs: one restart line, then the whole new answer", () => {
    const replayed = `The garden has four beds now.\n\n${BLOCK_2}${BLOCK_3}`;
    const sent = squared(replayed, delivered(BLOCK_1));
    expect(sent).toBe(`${RESTART_INTRO}\n\n${replayed}`);
    expect(sent.split(RESTART_INTRO)).toHaveLength(2);
  });

  test("the new answer is shorter than what was delivered: the restart line and the whole new answer", () => {
    expect(squared("The garden has three beds.", delivered(BLOCK_1, BLOCK_2))).toBe(`${RESTART_INTRO}\n\nThe garden has three beds.`);
  });

  test("a delivered part whose text is not known (a file): the restart line and the whole answer, never a guess", () => {
    expect(squared(answer, delivered(BLOCK_1, null))).toBe(`${RESTART_INTRO}\n\n${answer}`);
  });

  test("the blocks are compared as delivered, in order", () => {
    expect(squared(answer, delivered(BLOCK_2, BLOCK_1))).toBe(`${RESTART_INTRO}\n\n${answer}`);
  });

  test("nothing was delivered: the whole answer, without the restart line", () => {
    expect(squared(answer, [])).toBe(answer);
  });
});
