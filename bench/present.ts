/**
 * Presentation benchmark: splitting and rendering a 1 MB Markdown reply for
 * each platform (milliseconds per MB, beside the bare marked lexer on the
 * same text), and the 4 MB time beside the 1 MB time, so linear growth reads
 * as a ratio of about 4.
 */
import { Lexer } from "marked";
import { profileOf } from "../src/channels/registry.ts";
import type { GatewayChannel } from "../src/message/index.ts";
import { renderReply } from "../src/present/render.ts";
import { median, printFigure } from "./lib.ts";

const MB = 1_000_000;
const CHANNELS: GatewayChannel[] = ["telegram", "discord", "slack", "whatsapp", "signal"];

/** A deterministic chat-style Markdown document of at least `bytes` UTF-16 units. */
export function benchDocument(bytes: number): string {
  const words = ["reply", "split", "render", "message", "platform", "ladder", "boundary", "heading", "paragraph", "stream"];
  const extras = ["中文字符", "日本語", "👍🏽", "👨‍👩‍👧‍👦", "🇺🇸", "שלום", "naïve", "R&D", "a<b"];
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const sentence = () => {
    const out: string[] = [];
    for (let i = 0; i < 8 + Math.floor(next() * 12); i++) {
      const r = next();
      out.push(
        r < 0.8
          ? pick(words)
          : r < 0.88
            ? pick(extras)
            : r < 0.93
              ? `**${pick(words)}**`
              : r < 0.96
                ? `\`${pick(words)}\``
                : `[${pick(words)}](https://example.com/${i})`,
      );
    }
    return `${out.join(" ")}.`;
  };
  const blocks: string[] = [];
  let size = 0;
  for (let n = 0; size < bytes; n++) {
    const r = next();
    const block =
      n % 12 === 0
        ? `## Section ${n / 12 + 1}`
        : r < 0.55
          ? Array.from({ length: 2 + Math.floor(next() * 5) }, sentence).join(" ")
          : r < 0.7
            ? Array.from({ length: 3 + Math.floor(next() * 5) }, (_, i) => `${i + 1}. ${sentence()}`).join("\n")
            : r < 0.8
              ? `> ${sentence()}\n> ${sentence()}`
              : r < 0.9
                ? `| name | value |\n|---|---:|\n${Array.from({ length: 6 }, (_, i) => `| ${pick(words)} | ${i * 17} |`).join("\n")}`
                : `\`\`\`ts\n${Array.from({ length: 8 }, (_, i) => `const v${i} = f(${i}) < 3 && g(${i});`).join("\n")}\n\`\`\``;
    blocks.push(block);
    size += block.length + 2;
  }
  return blocks.join("\n\n");
}

/** Milliseconds `work` takes, after a full collection so one run's garbage is not billed to the next. */
function time(work: () => void): number {
  Bun.gc(true);
  const start = performance.now();
  work();
  return performance.now() - start;
}

/** Print the presentation figures. */
export async function benchPresent(): Promise<void> {
  const one = benchDocument(MB);
  const four = benchDocument(4 * MB);
  // Warm the JIT on a smaller document so the first platform is not penalised.
  renderReply(benchDocument(MB / 10), profileOf("telegram").text);
  const lex = median([1, 2, 3].map(() => time(() => new Lexer({ gfm: true }).lex(one))));
  for (const channel of CHANNELS) {
    const perMb = median([1, 2, 3].map(() => time(() => renderReply(one, profileOf(channel).text))));
    printFigure({
      name: `present: split+render 1 MB for ${channel}`,
      value: perMb,
      baseline: lex,
      baselineName: "marked lexer alone, 1 MB",
      unit: "ms/MB",
      lowerIsBetter: true,
    });
    const fourMb = time(() => renderReply(four, profileOf(channel).text));
    printFigure({
      name: `present: split+render 4 MB for ${channel}`,
      value: fourMb,
      baseline: perMb,
      baselineName: "1 MB",
      unit: "ms",
      lowerIsBetter: true,
    });
  }
}

if (import.meta.main) await benchPresent();
