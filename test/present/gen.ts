/**
 * A seeded generator of chat-style Markdown documents for the property tests
 * and the benchmark: headings, lists, tables, nested emphasis, links, code
 * fences, CJK, emoji with modifiers/ZWJ/flags, RTL and combining marks. Every
 * visible word is recorded as an atom, in order, so a test can check that
 * the rendered parts give back all the content.
 */

/** A small, fast, seeded PRNG (mulberry32): the same seed gives the same documents. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Fence {
  code: string;
  atoms: string[];
}

export interface GenDoc {
  markdown: string;
  /** Visible content in order; fence atoms are listed in `fences` too. */
  atoms: string[];
  fences: Fence[];
}

const LATIN = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliet",
  "kilo",
  "lima",
  "mike",
  "november",
  "oscar",
  "papa",
  "quebec",
  "romeo",
  "sierra",
  "tango",
  "uniform",
  "victor",
  "whiskey",
  "xray",
  "yankee",
  "zulu",
  "the",
  "a",
  "of",
  "and",
  "to",
  "in",
  "is",
  "it",
  "Fermix",
  "reply",
  "message",
  "split",
  "render",
];
const CJK = ["中文字符", "测试", "日本語のテキスト", "ひらがな", "カタカナ", "한국어", "문장입니다", "漢字"];
const RTL = ["שלום", "עברית", "مرحبا", "العربية", "كتاب", "ספר"];
const EMOJI = ["👍🏽", "👨‍👩‍👧‍👦", "🇺🇸", "🇯🇵", "❤️", "🏳️‍🌈", "👩🏾‍💻", "🧑🏻‍🚀", "😀", "🎉", "✍🏿", "🇩🇪🇫🇷"];
const MARKED = ["e\u0301te\u0301", "nai\u0308ve", "Zo\u0308e", "a\u0323\u0302"];
const ESCAPED = ["a<b", "R&D", "x>y", '"quoted"', "5<6>4", "AT&T"];
const LANGS = ["py", "ts", "js", "rust", "", "sh", "json", "go"];

export class DocGen {
  private readonly atoms: string[] = [];
  private readonly fences: Fence[] = [];

  constructor(private readonly rand: () => number) {}

  private int(min: number, max: number): number {
    return min + Math.floor(this.rand() * (max - min + 1));
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.rand() * list.length)]!;
  }

  private chance(p: number): boolean {
    return this.rand() < p;
  }

  /** One visible word, recorded as an atom. */
  word(): string {
    const r = this.rand();
    const w =
      r < 0.62
        ? this.pick(LATIN)
        : r < 0.74
          ? this.pick(CJK)
          : r < 0.84
            ? this.pick(EMOJI)
            : r < 0.91
              ? this.pick(RTL)
              : r < 0.95
                ? this.pick(MARKED)
                : this.pick(ESCAPED);
    this.atoms.push(w);
    return w;
  }

  private words(min: number, max: number): string {
    return Array.from({ length: this.int(min, max) }, () => this.word()).join(" ");
  }

  /** Inline content: words with emphasis (nested), strike, code spans and links. */
  inline(min = 3, max = 14): string {
    const out: string[] = [];
    const n = this.int(min, max);
    for (let i = 0; i < n; i++) {
      const r = this.rand();
      if (r < 0.72) out.push(this.word());
      else if (r < 0.78) out.push(`**${this.words(1, 3)}${this.chance(0.4) ? ` *${this.words(1, 2)}*` : ""}**`);
      else if (r < 0.83) out.push(`*${this.words(1, 3)}*`);
      else if (r < 0.86) out.push(`~~${this.words(1, 2)}~~`);
      else if (r < 0.91) out.push(`\`${this.words(1, 2)}\``);
      else if (r < 0.96) out.push(`[${this.words(1, 3)}](https://example.com/${this.int(1, 999)}?q=a&r=b)`);
      else {
        const url = `https://fermix.dev/p/${this.int(1, 99999)}`;
        this.atoms.push(url);
        out.push(url);
      }
    }
    return out.join(" ");
  }

  private sentence(): string {
    return `${this.inline()}${this.pick([".", ".", "!", "?", "。", "…"])}`;
  }

  paragraph(): string {
    const r = this.rand();
    if (r < 0.03) {
      // A wall: one long line with no paragraph or line break, so cuts fall on sentences.
      return Array.from({ length: this.int(15, 60) }, () => this.sentence()).join(" ");
    }
    if (r < 0.05) {
      // No spaces at all: only a hard cut between grapheme clusters works.
      const pool = this.pick([EMOJI, CJK, MARKED, ["x"], RTL]);
      const parts = Array.from({ length: this.int(200, 1500) }, () => this.pick(pool));
      this.atoms.push(parts.join(""));
      return parts.join("");
    }
    const lines = Array.from({ length: this.int(1, 3) }, () => Array.from({ length: this.int(1, 5) }, () => this.sentence()).join(" "));
    return lines.join(this.chance(0.5) ? "\n" : "  \n");
  }

  heading(): string {
    return `${"#".repeat(this.int(1, 6))} ${this.inline(1, 6)}`;
  }

  list(depth = 0): string {
    const ordered = this.chance(0.4);
    const start = this.int(1, 9);
    const items: string[] = [];
    const indent = "   ".repeat(depth);
    for (let i = 0; i < this.int(1, 8); i++) {
      const marker = ordered ? `${start + i}.` : this.pick(["-", "*", "+"]);
      const task = !ordered && this.chance(0.15) ? this.pick(["[ ] ", "[x] "]) : "";
      let item = `${indent}${marker} ${task}${this.inline(2, 12)}`;
      if (depth < 2 && this.chance(0.15)) item += `\n${this.list(depth + 1)}`;
      items.push(item);
    }
    return items.join("\n");
  }

  quote(): string {
    const lines = Array.from({ length: this.int(1, this.chance(0.3) ? 12 : 4) }, () => `> ${this.inline(2, 16)}`);
    if (this.chance(0.15)) lines.push(`> > ${this.inline(2, 8)}`);
    return lines.join("\n");
  }

  table(): string {
    const cols = this.int(2, 5);
    const row = () => `| ${Array.from({ length: cols }, () => this.cell()).join(" | ")} |`;
    const rows = [row(), `| ${Array.from({ length: cols }, () => this.pick(["---", ":--", "--:", ":-:"])).join(" | ")} |`];
    for (let i = 0; i < this.int(1, 25); i++) rows.push(row());
    return rows.join("\n");
  }

  private cell(): string {
    const r = this.rand();
    if (r < 0.15) return `**${this.word()}**`;
    if (r < 0.25) return `[${this.word()}](https://example.com/c)`;
    return this.words(1, 3);
  }

  code(): string {
    const lang = this.pick(LANGS);
    const lines: string[] = [];
    const atoms: string[] = [];
    const big = this.chance(0.08);
    for (let i = 0; i < (big ? this.int(150, 400) : this.int(1, 20)); i++) {
      const line = `${"  ".repeat(this.int(0, 3))}let v${i} = f(${this.int(0, 99)}) < 3 && x > 1; // ${this.pick(LATIN)} ${this.pick(CJK)}`;
      lines.push(line);
      atoms.push(...line.trim().split(/\s+/));
    }
    const code = lines.join("\n");
    this.atoms.push(...atoms);
    this.fences.push({ code, atoms });
    return `\`\`\`${lang}\n${code}\n\`\`\``;
  }

  /** A whole document of `blocks` top-level blocks. */
  document(blocks: number): GenDoc {
    const out: string[] = [];
    for (let i = 0; i < blocks; i++) {
      const r = this.rand();
      if (r < 0.15) out.push(this.heading());
      else if (r < 0.5) out.push(this.paragraph());
      else if (r < 0.64) out.push(this.list());
      else if (r < 0.72) out.push(this.quote());
      else if (r < 0.8) out.push(this.table());
      else if (r < 0.92) out.push(this.code());
      else if (r < 0.95) out.push("---");
      else out.push(`Caf&eacute; &copy; ${this.inline(2, 6)}.`);
    }
    return { markdown: out.join("\n\n"), atoms: [...this.atoms], fences: [...this.fences] };
  }
}

/** A reproducible document: the same seed gives the same text. */
export function generate(seed: number, blocks?: number): GenDoc {
  const rand = prng(seed);
  const gen = new DocGen(rand);
  return gen.document(blocks ?? 1 + Math.floor(rand() * 16));
}
