/**
 * Independent checks of rendered parts, written from the platforms' rules
 * rather than from the renderer's code: Telegram's HTML grammar and length
 * after entity parsing, fence balance, and grapheme integrity at the cuts.
 */

/** Telegram's supported HTML: tag → allowed attribute text. */
const TELEGRAM_TAGS: Record<string, RegExp> = {
  b: /^$/,
  i: /^$/,
  s: /^$/,
  code: /^(| class="language-[\w+#.-]+")$/,
  pre: /^$/,
  a: /^ href="[^"<>]*"$/,
  blockquote: /^(| expandable)$/,
};
const ENTITY_RE = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);/;

/** Problems with a Telegram HTML part: unknown tags, bad nesting, stray < > &, bad entities. */
export function telegramProblems(html: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  let i = 0;
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === "<") {
      const m = /^<(\/?)([a-z]+)([^<>]*)>/.exec(html.slice(i, i + 400));
      if (!m) {
        problems.push(`stray < at ${i}`);
        i++;
        continue;
      }
      const [whole, slash, tag, attrs] = m as unknown as [string, string, string, string];
      if (!(tag in TELEGRAM_TAGS)) problems.push(`unsupported tag ${tag}`);
      if (slash) {
        if (attrs) problems.push(`attributes on closing ${tag}`);
        const open = stack.pop();
        if (open !== tag) problems.push(`closing ${tag} while ${open ?? "nothing"} is open`);
      } else {
        if (!TELEGRAM_TAGS[tag]?.test(attrs)) problems.push(`bad attributes on ${tag}: ${attrs}`);
        const top = stack.at(-1);
        if (top === "code" || (top === "pre" && tag !== "code")) problems.push(`${tag} inside ${top}`);
        if (tag === "code" && attrs && top !== "pre") problems.push("language class outside pre");
        if (tag === "blockquote" && stack.includes("blockquote")) problems.push("nested blockquote");
        if (tag === "pre" && stack.includes("blockquote")) problems.push("pre inside blockquote");
        if ((tag === "a" && stack.includes("code")) || (tag === "code" && stack.includes("a"))) problems.push("link and code nested");
        stack.push(tag);
      }
      i += whole.length;
      continue;
    }
    if (ch === ">") problems.push(`stray > at ${i}`);
    if (ch === "&" && !ENTITY_RE.test(html.slice(i, i + 12))) problems.push(`broken entity at ${i}`);
    i++;
  }
  if (stack.length > 0) problems.push(`unclosed ${stack.join(",")}`);
  return problems;
}

/**
 * Problems with a Slack mrkdwn part: Slack reads < > & as control
 * characters, so the only < is a link <https://…|label> and every & is one
 * of &amp; &lt; &gt;.
 */
export function slackProblems(text: string): string[] {
  const problems: string[] = [];
  const outside = text.replace(/<(?:https?:\/\/|mailto:)[^\s|<>]+\|[^<>]*>/g, "");
  if (/[<>]/.test(outside.replace(/^>( |$)/gm, ""))) problems.push("a < or > outside a link");
  for (const m of text.matchAll(/&/g)) {
    if (!/^&(amp|lt|gt);/.test(text.slice(m.index, m.index + 5))) problems.push(`bad escape at ${m.index}`);
  }
  return problems;
}

function decodeBasic(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);/g, (_, e: string) =>
    e === "lt"
      ? "<"
      : e === "gt"
        ? ">"
        : e === "amp"
          ? "&"
          : e === "quot"
            ? '"'
            : String.fromCodePoint(e[1] === "x" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1))),
  );
}

/** The text a reader sees, per dialect. */
export function visibleText(dialect: string, text: string): string {
  if (dialect === "telegram") return decodeBasic(text.replace(/<[^>]*>/g, ""));
  if (dialect === "slack") return decodeBasic(text.replace(/<([^|>]*)\|([^>]*)>/g, "$2"));
  return text;
}

/** Length as the platform counts it: Telegram after entity parsing, others as sent (UTF-16). */
export function platformLength(dialect: string, text: string): number {
  return dialect === "telegram" ? visibleText("telegram", text).length : text.length;
}

/** Content for order checks: whitespace and the decoration characters dialects add are dropped. */
export function skeleton(text: string): string {
  return text.replace(/[\s*_~`>|#•◦▪☐☑─\-[\]():.!?,;"'\\\u200b]/g, "");
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Code points that continue a grapheme cluster and must never start a part's text: marks (U+FE0F among them), skin-tone modifiers, the zero-width joiner. */
const CONTINUES = /^[\p{M}\p{Emoji_Modifier}\u200d]/u;

/** Problems with grapheme integrity in one part's visible text. */
export function graphemeProblems(visible: string): string[] {
  const problems: string[] = [];
  if (LONE_SURROGATE.test(visible)) problems.push("lone surrogate");
  // After any decoration a renderer adds at a part's start, the first real character must begin a cluster.
  const body = visible.replace(/^[\s>*_~`•◦▪☐☑|]+/, "");
  if (CONTINUES.test(body)) problems.push(`part starts inside a cluster: ${JSON.stringify(body.slice(0, 4))}`);
  const end = visible.replace(/[\s*_~`|]+$/, "");
  if (end.endsWith("\u200d")) problems.push("part ends with a zero-width joiner");
  for (const run of visible.match(/\p{Regional_Indicator}+/gu) ?? []) {
    if ([...run].length % 2 !== 0) problems.push("a flag split in half");
  }
  return problems;
}

/** Whether every atom appears in order in `text` (both reduced to their skeleton). */
export function missingAtom(text: string, atoms: readonly string[]): string | undefined {
  const hay = skeleton(text);
  let at = 0;
  for (const atom of atoms) {
    const needle = skeleton(atom);
    if (!needle) continue;
    const found = hay.indexOf(needle, at);
    if (found === -1) return `${atom} (after …${hay.slice(Math.max(0, at - 40), at)})`;
    at = found + needle.length;
  }
  return undefined;
}
