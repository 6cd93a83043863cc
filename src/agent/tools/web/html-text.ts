/**
 * An HTML element (as linkedom parsed it) as Markdown-ish text for the model:
 * headings, paragraphs, lists, links, emphasis, code, quotes and tables kept
 * as Markdown marks, everything else as its text. This only walks a tree
 * that a real HTML parser built; it parses nothing itself. Links are made
 * absolute against the page's URL, and only http(s) ones are kept as links.
 */

/** The few DOM members the walk reads (linkedom's nodes have them). */
interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
  getAttribute?(name: string): string | null;
}

const TEXT = 3;
const ELEMENT = 1;

const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "CANVAS", "IFRAME", "OBJECT", "FORM", "BUTTON", "SELECT", "INPUT", "TEXTAREA", "HEAD"]);
const BLOCKS = new Set([
  "P",
  "DIV",
  "SECTION",
  "ARTICLE",
  "MAIN",
  "HEADER",
  "FOOTER",
  "ASIDE",
  "NAV",
  "FIGURE",
  "FIGCAPTION",
  "DL",
  "DT",
  "DD",
  "ADDRESS",
  "DETAILS",
  "SUMMARY",
  "BODY",
  "HTML",
]);

/** The Markdown-ish text of `root`, its links resolved against `base`. */
export function htmlText(root: DomNode, base: string): string {
  const blocks: string[] = [];
  walkBlock(root, base, blocks, "");
  return blocks
    .map((b) => b.trimEnd())
    .filter((b) => b.trim() !== "")
    .join("\n\n");
}

/** Block-level content: each paragraph, heading, list item… is one entry of `out`, prefixed for quotes and lists. */
function walkBlock(node: DomNode, base: string, out: string[], prefix: string): void {
  let inline = "";
  const flush = () => {
    const text = inline.replace(/[ \t\r\n\f]+/g, " ").trim();
    if (text !== "") out.push(prefix + text);
    inline = "";
  };
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === TEXT) {
      inline += child.textContent ?? "";
      continue;
    }
    if (child.nodeType !== ELEMENT) continue;
    const name = child.nodeName.toUpperCase();
    if (SKIP.has(name)) continue;
    const heading = /^H([1-6])$/.exec(name);
    if (heading) {
      flush();
      const text = inlineText(child, base);
      if (text !== "") out.push(`${prefix}${"#".repeat(Number(heading[1]))} ${text}`);
    } else if (name === "UL" || name === "OL") {
      flush();
      let n = 0;
      const items: string[] = [];
      for (const item of Array.from(child.childNodes)) {
        if (item.nodeType !== ELEMENT || item.nodeName.toUpperCase() !== "LI") continue;
        n++;
        const marker = name === "OL" ? `${n}. ` : "- ";
        const inner: string[] = [];
        walkBlock(item, base, inner, "");
        const [first = "", ...rest] = inner;
        items.push(`${prefix}${marker}${first}${rest.map((line) => `\n${prefix}   ${line}`).join("")}`);
      }
      if (items.length > 0) out.push(items.join("\n"));
    } else if (name === "PRE") {
      flush();
      const code = (child.textContent ?? "").replace(/\n+$/, "");
      out.push(`${prefix}\`\`\`\n${code}\n\`\`\``);
    } else if (name === "BLOCKQUOTE") {
      flush();
      walkBlock(child, base, out, `${prefix}> `);
    } else if (name === "TABLE") {
      flush();
      const rows = tableRows(child, base);
      if (rows.length > 0) out.push(rows.map((cells) => `${prefix}| ${cells.join(" | ")} |`).join("\n"));
    } else if (name === "HR") {
      flush();
      out.push(`${prefix}---`);
    } else if (name === "BR") {
      inline += "\n";
    } else if (BLOCKS.has(name) || name === "LI") {
      flush();
      walkBlock(child, base, out, prefix);
    } else {
      inline += inlineText(child, base, true);
    }
  }
  flush();
}

/** Inline content: text with emphasis, code and links marked. `keepSpace` keeps the spaces around it (inside a paragraph). */
function inlineText(node: DomNode, base: string, keepSpace = false): string {
  const name = node.nodeName.toUpperCase();
  if (node.nodeType === TEXT) return node.textContent ?? "";
  if (node.nodeType !== ELEMENT || SKIP.has(name)) return "";
  if (name === "BR") return "\n";
  if (name === "IMG") {
    const alt = node.getAttribute?.("alt")?.trim();
    return alt ? `[image: ${alt}]` : "";
  }
  const inner = Array.from(node.childNodes)
    .map((child) => inlineText(child, base, true))
    .join("");
  const text = keepSpace ? inner : inner.replace(/\s+/g, " ").trim();
  const core = text.trim();
  if (core === "") return keepSpace ? text : "";
  const around = (mark: string) => text.replace(core, `${mark}${core}${mark}`);
  switch (name) {
    case "STRONG":
    case "B":
      return around("**");
    case "EM":
    case "I":
      return around("*");
    case "CODE":
    case "KBD":
    case "SAMP":
      return around("`");
    case "A": {
      const href = link(node.getAttribute?.("href") ?? null, base);
      return href && href !== core ? text.replace(core, `[${core}](${href})`) : text;
    }
    default:
      return text;
  }
}

/** An href as an absolute http(s) URL, or undefined (a script: link, a fragment, nothing). */
function link(href: string | null, base: string): string | undefined {
  if (!href || href.startsWith("#")) return undefined;
  try {
    const url = new URL(href, base);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function tableRows(table: DomNode, base: string): string[][] {
  const rows: string[][] = [];
  const visit = (node: DomNode) => {
    for (const child of Array.from(node.childNodes)) {
      if (child.nodeType !== ELEMENT) continue;
      const name = child.nodeName.toUpperCase();
      if (name === "TR") {
        const cells = Array.from(child.childNodes)
          .filter((cell) => cell.nodeType === ELEMENT && /^T[DH]$/i.test(cell.nodeName))
          .map((cell) => inlineText(cell, base).replace(/\|/g, "\\|"));
        if (cells.length > 0) rows.push(cells);
      } else if (name === "THEAD" || name === "TBODY" || name === "TFOOT") visit(child);
    }
  };
  visit(table);
  return rows;
}
