/**
 * Golden tests: one shared set of documents (golden/docs/*.md) rendered for
 * every dialect, compared with the stored output (golden/<doc>.<channel>.txt).
 * Run with UPDATE_GOLDEN=1 to rewrite the files after a deliberate change,
 * then read the diff.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import type { GatewayChannel } from "../../src/message/index.ts";
import { plainText, renderReply } from "../../src/present/render.ts";

const DIR = join(import.meta.dir, "golden");
const DOCS = readdirSync(join(DIR, "docs"))
  .filter((f) => f.endsWith(".md"))
  .sort();
const CHANNELS: GatewayChannel[] = ["telegram", "discord", "slack", "whatsapp", "signal"];
const UPDATE = process.env.UPDATE_GOLDEN === "1";

/** Parts, flags and attachments in one readable text. */
function describeReply(markdown: string, channel: GatewayChannel): string {
  const reply = renderReply(markdown, profileOf(channel).text);
  const out: string[] = [];
  reply.parts.forEach((part, i) => {
    out.push(`=== part ${i + 1}/${reply.parts.length} notify=${part.notify} linkPreview=${part.linkPreview}`);
    out.push(part.text);
  });
  for (const a of reply.attachments) out.push(`=== attachment ${a.filename} ${a.mime} ${a.content.length} chars`);
  return `${out.join("\n")}\n`;
}

describe("golden output per dialect", () => {
  test("the shared document set exists", () => {
    expect(DOCS.length).toBeGreaterThanOrEqual(8);
  });
  for (const doc of DOCS) {
    const name = doc.replace(/\.md$/, "");
    for (const channel of [...CHANNELS, "plain" as const]) {
      test(`${name} on ${channel}`, async () => {
        const markdown = await Bun.file(join(DIR, "docs", doc)).text();
        const actual = channel === "plain" ? `${plainText(markdown)}\n` : describeReply(markdown, channel);
        const file = Bun.file(join(DIR, `${name}.${channel}.txt`));
        if (UPDATE || !(await file.exists())) await Bun.write(file, actual);
        expect(actual).toBe(await file.text());
      });
    }
  }
});
